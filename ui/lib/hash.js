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

/**
 * The last segment of a create page's address (`#/taskdefs/+new`). Not `new`: that is how a task definition, role or
 * event handler named `new` is addressed (`encodeURIComponent("new")`), and it must open that one. A name never
 * yields this segment, since a name is written encoded and `encodeURIComponent` writes `+` as `%2B`.
 */
export const NEW_SEGMENT = "+new";

/** The sections whose list offers a create page, as their addresses begin (`#/access/roles/…`). */
const SECTIONS_WITH_CREATE_PAGE = ["definitions", "taskdefs", "schedules", "events", "webhooks", "access/roles"];

/**
 * The address of a section's create page.
 * @param {string} section as its addresses begin ("taskdefs", "access/roles")
 */
export function createHash(section) {
  return `#/${section}/${NEW_SEGMENT}`;
}

/**
 * The create page that a path of the form the UI wrote before (`taskdefs/new`, bookmarked from its New button) meant,
 * when it names no `new` of that section: that path now opens the one named `new` when there is one, as any name's
 * does, and otherwise still leads where it did. Undefined for any other path.
 * @param {string} path as {@link readHash} answers it
 */
export function formerCreateHash(path) {
  const section = path.endsWith("/new") ? path.slice(0, -"/new".length) : undefined;
  return section !== undefined && SECTIONS_WITH_CREATE_PAGE.includes(section) ? createHash(section) : undefined;
}
