// @ts-check
/**
 * The page's address (`location.hash`) as the router reads it. Views write each name into it as one percent-encoded
 * segment (`#/definitions/${encodeURIComponent(name)}/2`) and filters as an encoded query (URLSearchParams), so the
 * address is split into path and query while still encoded, and each part decoded once: a name holding `/`, `?`,
 * `&`, `+` or `%` (a workflow or task definition may be called `R&D`, `a/b` or `50% off`) reaches its view whole.
 */

/**
 * The path (still encoded, to match routes against: a `/` inside a name stays `%2F`), the query's parameters, and the
 * address without its `#/` (to come back to after a login).
 * @param {string} hash `location.hash`
 * @returns {{ raw: string, path: string, params: URLSearchParams }}
 */
export function readHash(hash) {
  const raw = hash.replace(/^#\/?/, "");
  const at = raw.indexOf("?");
  return { raw, path: at < 0 ? raw : raw.slice(0, at), params: new URLSearchParams(at < 0 ? "" : raw.slice(at + 1)) };
}

/**
 * A part of the path a route captured, as its view takes it: decoded once; as written when it is no valid encoding
 * (a `%` typed into the address by hand).
 * @param {string} part
 */
export function decodePart(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
