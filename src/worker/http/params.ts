import type { IRequest } from "itty-router";
import { validationError } from "./errors";

/**
 * A path parameter, percent-decoded. A malformed escape (`%zz`) is the caller's mistake, so it is a 400
 * in the contract's shape rather than the URIError a bare decodeURIComponent would turn into a 500.
 */
export function decodedPathParam(request: IRequest, name: string): string {
  try {
    return decodeURIComponent(request.params[name] ?? "");
  } catch {
    throw validationError(`Malformed path parameter ${name}`, [{ path: name, message: "is not valid percent-encoding" }]);
  }
}

/** A query parameter as sent (the first, when repeated); undefined when absent. */
export function queryValue(request: IRequest, name: string): string | undefined {
  const value = request.query[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Longest name a query gives (a worker id, a domain, a task type). */
export const MAX_QUERY_NAME_LENGTH = 256;

/** A name given in the query (a worker id, a domain): undefined when absent or empty, a 400 when over `maxLength` characters. */
export function nameQuery(request: IRequest, name: string, maxLength = MAX_QUERY_NAME_LENGTH): string | undefined {
  const value = queryValue(request, name);
  if (value === undefined || value === "") return undefined;
  if (value.length > maxLength) throw validationError(`Invalid query parameter ${name}`, [{ path: name, message: `must be at most ${maxLength} characters` }]);
  return value;
}

/** Parses an optional integer query parameter, 400 when present but not an integer in range. */
export function integerQuery(request: IRequest, name: string, min: number, max: number): number | undefined {
  const raw = queryValue(request, name);
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw validationError(`Invalid query parameter ${name}`, [{ path: name, message: `must be an integer from ${min} to ${max}` }]);
  }
  return value;
}

/**
 * The words Spring's StringToBooleanConverter binds Conductor's boolean parameters from, compared trimmed and
 * case-insensitively: clients send `True` (the Python SDK), `1` (PHP's http_build_query) or `yes` by hand.
 */
const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ["true", true], ["on", true], ["yes", true], ["1", true],
  ["false", false], ["off", false], ["no", false], ["0", false],
]);

/** What a boolean parameter reads as, as Spring binds it; undefined when it is none of Spring's words. */
export function booleanWord(raw: string): boolean | undefined {
  return BOOLEAN_WORDS.get(raw.trim().toLowerCase());
}

/** The 400's message for a boolean parameter that is none of {@link booleanWord}'s words. */
export const BOOLEAN_PARAMETER_MESSAGE = "must be true or false (or on/off, yes/no, 1/0)";

/**
 * Parses an optional boolean query parameter, `fallback` when absent or blank. Any of Spring's words for true
 * and false ({@link booleanWord}); any other value is a 400.
 */
export function booleanQuery(request: IRequest, name: string, fallback: boolean): boolean {
  const raw = queryValue(request, name);
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = booleanWord(raw);
  if (value === undefined) throw validationError(`Invalid query parameter ${name}`, [{ path: name, message: BOOLEAN_PARAMETER_MESSAGE }]);
  return value;
}

/**
 * The named query parameters as a schema reads them: the first value of each of `singles`, every value of
 * each of `lists` (a comma-separated value split, as Spring binds Conductor's `List<String>` parameters).
 * Empty values are left out, so an empty parameter means its default, as {@link booleanQuery} reads it.
 */
export function queryParams(request: IRequest, singles: readonly string[], lists: readonly string[] = []): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const name of singles) {
    const value = queryValue(request, name);
    if (value !== undefined && value !== "") params[name] = value;
  }
  for (const name of lists) {
    const raw = request.query[name];
    const values = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]).flatMap((value) => value.split(",")).map((value) => value.trim()).filter(Boolean);
    if (values.length > 0) params[name] = values;
  }
  return params;
}
