/**
 * Orkes' webhook matching: a WAIT_FOR_WEBHOOK task waiting for events sent to a webhook (`POST /webhook/{id}`, see the
 * webhook configs) says which events are its own by `matches`, JSONPath keys into the event's payload, each with the
 * value it must hold there (`{"$['event']['type']": "message", "$.data.orderId": "${workflow.input.orderId}"}`); all
 * must hold. Written under `inputParameters.matches`, as Orkes' docs do, or as `$…` keys of `inputParameters` itself, as
 * the official JavaScript client's `waitForWebhookTask({matches})` writes them.
 *
 * Routing is by key, not by scanning: as the task starts, its resolved values (sorted by path) and the names of its
 * workflow and task make its match key; an event's values at the same paths make the same key when they match (see
 * {@link matchKey}). Values compare as text, trimmed and case-insensitively, as Conductor's do.
 */
import { isRecord } from "../../definition/checks";
import { referencedSecrets } from "../../expressions";
import type { JsonObject, JsonValue } from "../../model";
import { setOwn } from "../../own-property";

/** Most entries a task's `matches` may have. */
export const MAX_MATCHES = 20;

/** Longest JSONPath key of `matches`. */
const MAX_PATH_LENGTH = 256;

/** A path into a payload: object keys and array indexes, outermost first. */
export type PayloadPath = ReadonlyArray<string | number>;

/**
 * A name after `.`: what a workflow expression's dotted step reads (src/engine/expressions/lexer.ts), so that a key read
 * as `${workflow.input.@id}` there is named so here too. Jayway JsonPath, which Conductor reads these paths with, reads
 * a dotted property up to the next `.`, `[` or `(` (PathCompiler.readPropertyOrFunctionToken): `$`, `@`, `#` and
 * characters beyond ASCII but whitespace (`größe`, `名前`) are part of it; other characters need a bracket.
 */
const NAME = /^(?:[A-Za-z_$@#]|[^\0-\x7f\s])(?:[A-Za-z0-9_$@#-]|[^\0-\x7f\s])*/u;

/**
 * The segments of a JSONPath key (`$`, then `.name`, `['name']`, `["name"]` or `[0]`, any number of them), or why it is
 * not one this service can follow (wildcards, filters and slices select several values: no one value to match).
 */
export function parseMatchPath(path: string): PayloadPath | Error {
  if (path.length > MAX_PATH_LENGTH) return new Error(`is longer than ${MAX_PATH_LENGTH} characters`);
  if (!path.startsWith("$")) return new Error("must be a JSONPath starting with $ (such as $['event']['type'] or $.event.type)");
  const segments: Array<string | number> = [];
  let rest = path.slice(1);
  while (rest !== "") {
    if (rest.startsWith(".")) {
      const name = NAME.exec(rest.slice(1))?.[0];
      if (name === undefined) return new Error(`has no name after "." at ${JSON.stringify(rest.slice(0, 20))}`);
      segments.push(name);
      rest = rest.slice(1 + name.length);
      continue;
    }
    const quoted = /^\[\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*\]/.exec(rest);
    if (quoted !== null) {
      segments.push((quoted[1] ?? quoted[2]!).replace(/\\(.)/g, "$1"));
      rest = rest.slice(quoted[0].length);
      continue;
    }
    const index = /^\[\s*(0|[1-9][0-9]{0,8})\s*\]/.exec(rest);
    if (index !== null) {
      segments.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    return new Error(`can only name fields ($.name, $['name']) and list positions ($.list[0]), not ${JSON.stringify(rest.slice(0, 20))}`);
  }
  if (segments.length === 0) return new Error("must name a field of the payload, not the whole of it");
  return segments;
}

/**
 * The path a `matches` key names: a JSONPath, or a field name without the `$` (`event`, `data.id`, `[0]`), which
 * Conductor reads as one from the top of the event (Jayway JsonPath puts `$.` before it), as its docs' examples write them.
 */
export function parseMatchesKey(key: string): PayloadPath | Error {
  return parseMatchPath(key.startsWith("$") ? key : key.startsWith("[") ? `$${key}` : `$.${key}`);
}

/**
 * The path a webhook's `idempotencyKey` names in an event: a JSONPath (`$.id`), or, as Orkes' docs write it, a
 * `${workflow.input.<path>}` expression, the same place (the event is the input of the workflows it starts).
 */
export function parseWebhookKeyPath(key: string): PayloadPath | Error {
  const workflowInput = /^\$\{\s*workflow\.input((?:\.|\[).*?)\s*\}$/.exec(key);
  return parseMatchPath(workflowInput === null ? key : `$${workflowInput[1]}`);
}

/** A part of a webhook's `idempotencyKey`: text as written, or the event's value at a path. */
export type WebhookKeyPart = { readonly text: string } | { readonly path: PayloadPath };

/** A `${...}` reference in an idempotency key; what it holds is read as `${workflow.input.<path>}`. */
const KEY_REFERENCE = /\$\{([^}]*)\}/g;

/**
 * The parts of a webhook's `idempotencyKey`: a JSONPath (`$.id`) is the one value there; a text holding
 * `${workflow.input.<path>}` references is that text with each replaced by the event's value there, as Orkes resolves
 * the key (TargetWorkflowCollector.popIdempotencyKey: ParametersUtils.replace over `{workflow: {input: <event>}}`), so
 * `${workflow.input.repository.id}-${workflow.input.number}` or `bug-${workflow.input.bug_id}` key one start per event.
 * Only the workflow's input is known when an event comes (Orkes' docs: "only variables from the workflow input are
 * supported"); another reference, or a text with none, is an error.
 */
export function parseWebhookKey(key: string): WebhookKeyPart[] | Error {
  if (!key.includes("${")) {
    const path = parseMatchPath(key);
    return path instanceof Error ? path : [{ path }];
  }
  // One whole reference first: its path may hold a "}" in a bracket (${workflow.input['a}b']}), which ends a reference in a text.
  const whole = parseWebhookKeyPath(key);
  if (!(whole instanceof Error)) return [{ path: whole }];
  const parts: WebhookKeyPart[] = [];
  let at = 0;
  for (const reference of key.matchAll(KEY_REFERENCE)) {
    if (reference.index > at) parts.push({ text: key.slice(at, reference.index) });
    const path = parseWebhookKeyPath(reference[0]);
    if (path instanceof Error) return new Error(`${JSON.stringify(reference[0].slice(0, 60))} is not \${workflow.input.<path>} (${path.message})`);
    parts.push({ path });
    at = reference.index + reference[0].length;
  }
  if (at < key.length) parts.push({ text: key.slice(at) });
  if (!parts.some((part) => "path" in part)) return new Error("has no ${workflow.input.<path>} reference");
  return parts;
}

/** The value at `path` in `payload`, undefined when there is none. */
export function valueAt(payload: JsonValue, path: PayloadPath): JsonValue | undefined {
  let current: JsonValue | undefined = payload;
  for (const segment of path) {
    if (typeof segment === "number") current = Array.isArray(current) ? current[segment] : undefined;
    else current = isRecord(current) && !Array.isArray(current) && Object.hasOwn(current, segment) ? (current as JsonObject)[segment] : undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

/** A value as it is matched: text trimmed and lower-cased, a number or boolean as text; undefined for anything else. */
export function matchText(value: JsonValue | undefined): string | undefined {
  if (typeof value === "string") return value.trim().toLowerCase();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/**
 * The matches a task's input gives, as written (before or after resolution): `inputParameters.matches` with the `$…`
 * keys of the input itself; undefined when it gives none (the task is then called back by its own URL only).
 */
export function writtenMatches(input: JsonObject): JsonObject | undefined {
  const nested = input["matches"];
  const top = Object.keys(input).filter((key) => key.startsWith("$"));
  if (nested === undefined && top.length === 0) return undefined;
  const matches: JsonObject = {};
  if (isRecord(nested) && !Array.isArray(nested)) for (const [key, value] of Object.entries(nested)) setOwn(matches, key, value as JsonValue);
  for (const key of top) setOwn(matches, key, input[key]!);
  return matches;
}

/**
 * The secrets a task's matches name, as written in its input template. A task's stored input shows secrets masked,
 * and both the routing row and the execution's own check read the stored input: such a match could only ever hold
 * for an event carrying the mask itself.
 */
export function matchesSecrets(template: JsonObject): string[] {
  const matches: JsonObject = {};
  if (template["matches"] !== undefined) matches["matches"] = template["matches"];
  for (const key of Object.keys(template).filter((name) => name.startsWith("$"))) setOwn(matches, key, template[key]!);
  return referencedSecrets(matches);
}

/** Why a task's matches must not name secrets (see {@link matchesSecrets}). */
export function matchesSecretsMessage(secrets: readonly string[]): string {
  return `matches must not use secrets (${secrets.join(", ")}): a task's input holds them masked, so no event could match; verify the sender with the webhook's verifier instead`;
}

/** What a waiting task matches events by, once its matches are resolved: see {@link waitingMatch}. */
export interface WaitingMatch {
  /** Its JSONPath keys, sorted: the paths an event's values are read at. */
  readonly paths: readonly string[];
  /** Its match key: see {@link matchKey}. */
  readonly key: string;
}

/**
 * The key events and waiting tasks meet at: the workflow's name and version, the task's reference name (as in its
 * definition) and the matched values in the order of their sorted paths.
 */
export function matchKey(workflowName: string, workflowVersion: number, taskRefName: string, values: readonly string[]): string {
  return JSON.stringify([workflowName, workflowVersion, taskRefName, ...values]);
}

/**
 * What a task of workflow `workflowName` version `workflowVersion`, reference name `taskRefName`, waiting with the
 * resolved `matches`, matches events by; or why no event could match it (a path this service cannot follow, a value
 * that resolved to no text). Empty matches match every event sent to its webhook.
 */
export function waitingMatch(workflowName: string, workflowVersion: number, taskRefName: string, matches: JsonObject): WaitingMatch | Error {
  const paths = Object.keys(matches).sort();
  if (paths.length > MAX_MATCHES) return new Error(`matches has ${paths.length} entries, more than ${MAX_MATCHES}`);
  const values: string[] = [];
  for (const path of paths) {
    const parsed = parseMatchesKey(path);
    if (parsed instanceof Error) return new Error(`matches key ${JSON.stringify(path.slice(0, 60))} ${parsed.message}`);
    const text = matchText(matches[path]);
    if (text === undefined) return new Error(`matches ${JSON.stringify(path.slice(0, 60))} resolved to ${JSON.stringify(matches[path] ?? null).slice(0, 60)}, which no event value can equal (a text, number or boolean can)`);
    values.push(text);
  }
  return { paths, key: matchKey(workflowName, workflowVersion, taskRefName, values) };
}

/** The key an event's `payload` makes for tasks of that workflow and reference name matching at `paths`; undefined when a path holds no matchable value. */
export function eventMatchKey(payload: JsonValue, workflowName: string, workflowVersion: number, taskRefName: string, paths: readonly string[]): string | undefined {
  const values: string[] = [];
  for (const path of paths) {
    const parsed = parseMatchesKey(path);
    if (parsed instanceof Error) return undefined;
    const text = matchText(valueAt(payload, parsed));
    if (text === undefined) return undefined;
    values.push(text);
  }
  return matchKey(workflowName, workflowVersion, taskRefName, values);
}

/**
 * True when an event's `payload` meets `matches`, those of a task of workflow `workflowName` version `workflowVersion`
 * with reference name `taskRefName`: the key both make is the same.
 */
export function eventMeets(payload: JsonValue, workflowName: string, workflowVersion: number, taskRefName: string, matches: JsonObject): boolean {
  const match = waitingMatch(workflowName, workflowVersion, taskRefName, matches);
  return !(match instanceof Error) && eventMatchKey(payload, workflowName, workflowVersion, taskRefName, match.paths) === match.key;
}
