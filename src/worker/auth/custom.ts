import { serviceConfig } from "../config";
import type { CorsPolicy } from "../http/headers";
import { readBounded } from "../http/body";
import { ApiError } from "../http/errors";
import { grantsFor } from "./grants";
import type { Principal } from "./principal";
import type { AuthProvider } from "./provider";

/**
 * Longest the custom provider is waited for (its answer and its body together). A service binding's call has no time
 * limit of its own, and the provider is asked on every request without built-in credentials: a provider that hung
 * would hold each of them, and the client, for as long as it waited.
 */
export const AUTH_SERVICE_TIMEOUT_MS = 5_000;
/** Largest answer of the custom provider read: `{userId, roles}` is small; a larger one is refused unread (401). */
export const AUTH_SERVICE_MAX_ANSWER_BYTES = 64 * 1024;
/** `Retry-After` (seconds) when the custom provider could not answer. */
const AUTH_SERVICE_RETRY_AFTER_SECONDS = 5;

/** What the custom provider answers for a recognised request. */
interface CustomIdentity {
  userId?: unknown;
  roles?: unknown;
}

/**
 * True for a browser's request sent from another site (`Sec-Fetch-Site: cross-site`, or an `Origin` other than the
 * service's own), unless `CORS_ALLOWED_ORIGINS` names that origin. The custom provider may recognise a request by its
 * cookies (a session, Cloudflare Access), which a browser attaches to a request any page makes: taken to it, a link
 * or form on another site could act as the user (CSRF). Clients that are no browsers send neither header.
 */
function crossSiteBrowserRequest(request: Request, cors: CorsPolicy): boolean {
  const origin = request.headers.get("origin")?.toLowerCase();
  if (origin !== undefined && cors.origins.has(origin)) return false;
  if (request.headers.get("sec-fetch-site") === "cross-site") return true;
  return origin !== undefined && origin !== new URL(request.url).origin.toLowerCase();
}

/** The provider answered nothing usable in time or failed (5xx, unreachable): the request was not checked. */
function providerUnavailable(reason: string): ApiError {
  console.error(JSON.stringify({ msg: "custom auth provider unavailable", reason }));
  return new ApiError(503, "UNAVAILABLE", `The authentication service did not answer, so the request was not checked: try again in ${AUTH_SERVICE_RETRY_AFTER_SECONDS} s`, undefined, {
    "Retry-After": String(AUTH_SERVICE_RETRY_AFTER_SECONDS),
  });
}

/** What the provider answered: its status and its body parsed (undefined when not JSON). */
interface ProviderAnswer {
  status: number;
  identity: CustomIdentity | undefined;
}

/** Why the provider gave no answer in time (unreachable, a 5xx, slower than {@link AUTH_SERVICE_TIMEOUT_MS}). */
interface ProviderFailure {
  failed: string;
}

/** `text` parsed as JSON, or undefined when it is not JSON. */
function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Why a call to the provider threw, as logged. An exception the provider's Worker threw reaches the caller through
 * the service binding with its message (marked `remote`), and a provider's message may quote the credential it was
 * asked about (a session id, a token it could not parse): only its kind is logged, the provider's own logs hold the
 * rest. The runtime's own failures (a lost connection) quote nothing of the request and keep their message.
 */
function failedCall(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  if ((error as Error & { remote?: unknown }).remote === true) return `${error.name} thrown by the provider (its message is in the provider's logs: it may quote the request's credentials)`;
  return `${error.name}: ${error.message}`;
}

/** Asks the provider, its answer and body within {@link AUTH_SERVICE_TIMEOUT_MS}, reading at most {@link AUTH_SERVICE_MAX_ANSWER_BYTES}. */
async function askProvider(service: Fetcher, body: string): Promise<ProviderAnswer | ProviderFailure> {
  const signal = AbortSignal.timeout(AUTH_SERVICE_TIMEOUT_MS);
  const tooSlow = `no answer within ${AUTH_SERVICE_TIMEOUT_MS} ms`;
  const exchange = (async (): Promise<ProviderAnswer | ProviderFailure> => {
    const response = await service.fetch("https://auth-service/authenticate", { method: "POST", headers: { "content-type": "application/json" }, body, signal });
    if (response.status >= 500) {
      await response.body?.cancel();
      return { failed: `HTTP ${response.status}` };
    }
    if (!response.ok) {
      await response.body?.cancel();
      return { status: response.status, identity: undefined };
    }
    const answer = await readBounded(response.body, AUTH_SERVICE_MAX_ANSWER_BYTES);
    if (answer === "too-large") {
      console.error(JSON.stringify({ msg: "custom auth provider answered over the limit", limit: AUTH_SERVICE_MAX_ANSWER_BYTES }));
      return { status: response.status, identity: undefined };
    }
    return { status: response.status, identity: jsonOrUndefined(new TextDecoder().decode(answer)) as CustomIdentity | undefined };
  })().catch((error: unknown): ProviderFailure => ({ failed: signal.aborted ? tooSlow : failedCall(error) }));
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Raced as well as signalled: the time limit holds even where a binding or a body read does not heed the signal.
  const late = new Promise<ProviderFailure>((resolve) => (timer = setTimeout(() => resolve({ failed: tooSlow }), AUTH_SERVICE_TIMEOUT_MS)));
  try {
    return await Promise.race([exchange, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A custom authentication provider: another Worker bound as `AUTH_SERVICE` is asked who a request
 * is. It receives `POST /authenticate` with `{method, url, headers}` (never the body) and answers
 * 200 `{userId, roles?}`, 401 when it does not know the request, or anything else on failure: a 5xx, no answer
 * within {@link AUTH_SERVICE_TIMEOUT_MS} or a failed call is a 503 (the request was not checked), another status a 401.
 * It is asked only when no built-in credentials (API key, this service's or the OAuth issuer's
 * tokens) were recognised. See examples/custom-auth-worker.
 */
export const customProvider: AuthProvider = {
  name: "custom",
  async authenticate(request, env): Promise<Principal | undefined> {
    const service = env.AUTH_SERVICE;
    if (!service) return undefined;
    if (crossSiteBrowserRequest(request, serviceConfig(env).cors)) {
      throw new ApiError(401, "UNAUTHENTICATED", "A browser request from another site is not authenticated by the custom provider (it may carry the user's cookies without the user meaning it): send an API key or a token");
    }
    // fromEntries defines each name as its own key: assignment would drop one named __proto__.
    const headers = Object.fromEntries(request.headers) as Record<string, string>;
    const answer = await askProvider(service, JSON.stringify({ method: request.method, url: request.url, headers }));
    if ("failed" in answer) throw providerUnavailable(answer.failed);
    if (answer.status === 401) return undefined;
    if (answer.status < 200 || answer.status >= 300) {
      console.error(JSON.stringify({ msg: "custom auth provider failed", status: answer.status }));
      throw new ApiError(401, "INVALID_TOKEN", "The authentication service could not identify this request; check the credentials it expects");
    }
    const identity = answer.identity ?? {};
    if (typeof identity.userId !== "string" || identity.userId === "") {
      console.error(JSON.stringify({ msg: "custom auth provider answered without a userId" }));
      throw new ApiError(401, "INVALID_TOKEN", "The authentication service could not identify this request; check the credentials it expects");
    }
    const roles = Array.isArray(identity.roles) ? identity.roles.filter((role): role is string => typeof role === "string") : [];
    return { userId: identity.userId, grants: await grantsFor(env, identity.userId, roles, true), method: "custom" };
  },
};
