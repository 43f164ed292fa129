import { ApiError } from "./errors";

/** A router entry as itty-router keeps it (`router.routes`): its method (`ALL` for any) and its compiled path pattern first. */
export type RoutedEntry = readonly [method: string, pattern: RegExp, ...rest: unknown[]];

/** The order `Allow` lists methods in, whatever order the routes were registered in. */
const METHOD_ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/**
 * The answer for a request no route took: 405 METHOD_NOT_ALLOWED with `Allow` when routes serve its path with other
 * methods, as Conductor's Spring MVC answers a mapped path asked with a method it does not map
 * (HttpRequestMethodNotSupportedException, answered 405 since conductor-oss/conductor#1396: the official clients fall
 * back from PUT to GET on a 405 and only on one), else 404 as before. Built from the router's own entries, so it cannot
 * drift from them; it lists no more than the route table, which is the same for every caller.
 */
export class MethodTable {
  /** Each entry of a single method (an `ALL` one takes any method, so it never leaves a request to the catch-all). */
  private entries: ReadonlyArray<readonly [method: string, pattern: RegExp]> | undefined;

  /** `routes` is read on the first miss, not now: the router is still being filled when this is made. */
  constructor(private readonly routes: ReadonlyArray<RoutedEntry>) {}

  /** The methods routes serve `pathname` with, in {@link METHOD_ORDER}. */
  allowed(pathname: string): string[] {
    this.entries ??= this.routes.filter(([method]) => method !== "ALL").map(([method, pattern]) => [method, pattern] as const);
    const methods = new Set<string>();
    for (const [method, pattern] of this.entries) {
      if (!methods.has(method) && pattern.test(pathname)) methods.add(method);
    }
    return [...methods].sort((a, b) => rank(a) - rank(b));
  }

  /**
   * The answer to a plain `OPTIONS` (not a CORS preflight) no route took: 200 with `Allow` as Conductor's Spring MVC
   * answers it (RequestMappingInfoHandlerMapping's HttpOptionsHandler: the path's declared methods, HEAD after GET,
   * and OPTIONS), without a body; a path nothing serves is the 404 of any other method.
   */
  options(pathname: string): Response {
    const allowed = this.allowed(pathname);
    if (allowed.length === 0) throw this.refusal("OPTIONS", pathname);
    const implicit = allowed.flatMap((method) => (method === "GET" ? ["GET", "HEAD"] : [method]));
    return new Response(null, { status: 200, headers: { Allow: [...implicit, "OPTIONS"].join(", ") } });
  }

  /** The refusal for `method` on `pathname`, which no route answered. */
  refusal(method: string, pathname: string): ApiError {
    const allowed = this.allowed(pathname);
    // A route of this very method matched and let the request through (answered nothing): the path is not served.
    if (allowed.length === 0 || allowed.includes(method)) return new ApiError(404, "NOT_FOUND", `No route for ${method} ${pathname}`);
    const list = allowed.join(", ");
    // Conductor's own wording first ("Request method 'GET' is not supported"): clients and scripts match on it.
    return new ApiError(405, "METHOD_NOT_ALLOWED", `Request method '${method}' is not supported for ${pathname}: it takes ${list}`, undefined, { Allow: list });
  }
}

function rank(method: string): number {
  const index = METHOD_ORDER.indexOf(method);
  return index === -1 ? METHOD_ORDER.length : index;
}
