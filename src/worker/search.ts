import type { IRequest } from "itty-router";
import { WORKFLOW_STATUSES, type JsonObject } from "../engine/model";
import { toWorkflowSummary, type WorkflowSummaryRow } from "../engine/view";
import type { NameFilter } from "./auth/permissions";
import { ApiError, validationError } from "./http/errors";

/** Largest page a search returns. */
export const MAX_SEARCH_SIZE = 1000;

/** How long an execution ran, as WorkflowSummary's `executionTime`: 0 until it ends. */
const EXECUTION_TIME = "(CASE WHEN end_time > 0 THEN end_time - start_time ELSE 0 END)";

/** Columns (besides the `_time` ones, epoch milliseconds) holding numbers: compared with numbers, not text. */
const NUMERIC_COLUMNS: ReadonlySet<string> = new Set(["workflow_version", "priority", "workflow_priority", EXECUTION_TIME]);

/** Search fields a Conductor `query` may name, mapped to index columns. */
const QUERY_COLUMNS: Record<string, string> = {
  workflowType: "workflow_name",
  workflowName: "workflow_name",
  workflowId: "workflow_id",
  status: "status",
  correlationId: "correlation_id",
  startTime: "start_time",
  endTime: "end_time",
  updateTime: "update_time",
  // The Orkes client documents `modifiedTime` for this search; it is the update time.
  modifiedTime: "update_time",
  parentWorkflowId: "parent_workflow_id",
  version: "workflow_version",
  priority: "priority",
  reasonForIncompletion: "reason",
  executionTime: EXECUTION_TIME,
  // The event whose handler started it: a keyword of Conductor's index.
  event: "event",
};

/** Sort fields: those of Conductor's index (the UI sorts on any column of its results, workflowId among them). */
const SORT_COLUMNS: Record<string, string> = {
  startTime: "start_time",
  endTime: "end_time",
  updateTime: "update_time",
  modifiedTime: "update_time",
  workflowType: "workflow_name",
  workflowName: "workflow_name",
  status: "status",
  workflowId: "workflow_id",
  correlationId: "correlation_id",
  version: "workflow_version",
  priority: "priority",
  parentWorkflowId: "parent_workflow_id",
  reasonForIncompletion: "reason",
  failedReferenceTaskNames: "failed_reference_task_names",
  executionTime: EXECUTION_TIME,
  event: "event",
};

/** Order when the request names none: the newest first. */
const DEFAULT_ORDER = "start_time DESC";

/** The column a field names, if any; own keys only, so `constructor` and the like name nothing. */
function columnOf(columns: Record<string, string>, field: string): string | undefined {
  return Object.hasOwn(columns, field) ? columns[field] : undefined;
}

/** The `WHERE` of a query on the index being built: clauses joined by `AND`, and their bound values in order. */
export interface Filter {
  clauses: string[];
  bindings: (string | number)[];
  /** Where in `clauses` an equality on a broad column stands (see {@link addEquality}); {@link whereOf} reads it. */
  broad?: number[];
  /** Whether a clause finds rows by a narrow column ({@link NARROW_COLUMNS}); {@link whereOf} reads it. */
  narrowed?: boolean;
}

/**
 * Columns each value of which few rows hold (an execution's or a task's id, a correlation id): a statement comparing
 * one with a value or a list finds its rows through that column's index, whatever else it compares.
 */
const NARROW_COLUMNS: ReadonlySet<string> = new Set(["workflow_id", "correlation_id", "task_id"]);

/**
 * Adds `column = value`. On a broad column (a name, a status, a state, a type) the equality lets SQLite walk an index
 * on it that also serves the page's order, and stop at the page's end (`executions_by_name_status` for the UI's
 * `workflowType IN (x) AND status IN (FAILED)`), where a `json_each` list has it sort every row found. Without table
 * statistics SQLite then prefers that index to a narrow column's (two equalities and the order served weigh more than
 * one), so {@link whereOf} writes a broad equality as `+column = ?`, which no index serves, when a narrow column
 * ({@link NARROW_COLUMNS}) is compared too.
 *
 * For TEXT columns only (every caller's: {@link addIn}'s lists and a query's `=` on a field not numeric): `+column`
 * has no affinity, so on an INTEGER column `+column = '5'` compares a number with text and finds nothing, where
 * `column = '5'` would convert the text. A numeric column's equality is bound as a number instead (see {@link applyClause}'s
 * `numeric`).
 */
function addEquality(filter: Filter, column: string, value: string): void {
  if (NARROW_COLUMNS.has(column)) filter.narrowed = true;
  else (filter.broad ??= []).push(filter.clauses.length);
  filter.clauses.push(`${column} = ?`);
  filter.bindings.push(value);
}

/** Adds the clauses of `more` to `filter`, and what {@link whereOf} reads of them. */
function appendFilter(filter: Filter, more: Filter): void {
  for (const place of more.broad ?? []) (filter.broad ??= []).push(filter.clauses.length + place);
  if (more.narrowed === true) filter.narrowed = true;
  filter.clauses.push(...more.clauses);
  filter.bindings.push(...more.bindings);
}

/**
 * The `WHERE` of `filter` (nothing without clauses), its bindings those of `filter`. Where it compares a narrow column
 * (a correlation id, an execution's id), its equalities on broad ones are written `+column = ?`: the same comparison
 * (the unary `+` changes no text), which no index serves, so that SQLite finds the few rows by the narrow column's
 * index instead of walking every row of the name or the status (see {@link addEquality}).
 */
export function whereOf(filter: Filter): string {
  return filter.clauses.length === 0 ? "" : `WHERE ${conjunction(filter)}`;
}

/** The clauses of `filter` joined by `AND`, a broad equality beside a narrow column's written as {@link whereOf} says. */
function conjunction(filter: Filter): string {
  const broad = new Set(filter.narrowed === true ? filter.broad : []);
  return filter.clauses.map((clause, place) => (broad.has(place) ? `+${clause}` : clause)).join(" AND ");
}

function param(request: IRequest, name: string): string | undefined {
  const value = request.query[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === "" ? undefined : text.trim();
}

function intParam(request: IRequest, name: string, fallback: number, min: number, max: number): number {
  const raw = param(request, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw validationError(`Invalid query parameter ${name}`, [{ path: name, message: `must be an integer from ${min} to ${max}` }]);
  }
  return value;
}

function listOf(text: string): string[] {
  return text.split(",").map((item) => item.trim().replace(/^['"]|['"]$/g, "")).filter(Boolean);
}

/**
 * What may stand just before a quote that opens a quoted string: the start of the text, a space, a list's `(` or `,`,
 * or an operator. A quote after anything else is inside an unquoted value (`correlationId = O'Brien`), a character.
 */
const BEFORE_OPENING_QUOTE = /[\s(,=<>!]/;

/**
 * `text` with the inside of each quoted string ('…' or "…", a backslash escaping the next character) replaced by
 * `x`, the quotes kept: the same length, so that where an operator or a separator stands outside quotes is found in
 * it and applied to `text`. A quote opens a string only where a value starts (see {@link BEFORE_OPENING_QUOTE}): an
 * apostrophe inside a value would otherwise hide the rest of the query (`correlationId = O'Brien AND status = FAILED`
 * read as one value).
 */
function maskQuoted(text: string): string {
  let masked = "";
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === undefined) {
      if ((c === "'" || c === '"') && (i === 0 || BEFORE_OPENING_QUOTE.test(text[i - 1]!))) quote = c;
      masked += c;
    } else if (c === "\\" && i + 1 < text.length) {
      masked += "xx";
      i++;
    } else if (c === quote) {
      quote = undefined;
      masked += c;
    } else masked += "x";
  }
  return masked;
}

/** `text` cut at each match of `separator` (a global expression) found outside quoted strings (see {@link maskQuoted}). */
function splitOutsideQuotes(text: string, separator: RegExp): string[] {
  const parts: string[] = [];
  let from = 0;
  for (const found of maskQuoted(text).matchAll(separator)) {
    parts.push(text.slice(from, found.index));
    from = found.index + found[0].length;
  }
  parts.push(text.slice(from));
  return parts;
}

/** A query's value: a quoted string without its quotes and with its escapes read (`'O\'Brien'` is O'Brien), else as written. */
function queryValue(text: string): string {
  return readQueryValue(text).text;
}

/**
 * A query's value (see {@link queryValue}), and whether it was quoted: a quoted value is a phrase, its `*` a character.
 * A value opening a quote it does not close is a 400, as Conductor's parser refuses it ("String constant is not quoted"):
 * read as it stands, it would match nothing, and a typo would pass for an empty result.
 */
function readQueryValue(text: string): { text: string; quoted: boolean } {
  // The closing quote is one no backslash escapes: in "abc\" the quote is the value's, and the string is not closed.
  const quoted = /^(['"])((?:[^\\]|\\[\s\S])*)\1$/.exec(text);
  if (quoted) return { text: quoted[2]!.replace(/\\([\s\S])/g, "$1"), quoted: true };
  if (/^['"]/.test(text)) {
    // A string closed before the value's end (`"abc" -- note`, `'a' b`) is followed by text, not left open.
    const closed = maskQuoted(text).indexOf(text[0]!, 1) > 0;
    const problem = closed ? "has text after its closing quote" : "opens a quote it does not close";
    throw validationError("Invalid search query", [{ path: "query", message: `the value ${text} ${problem}` }]);
  }
  return { text, quoted: false };
}

/** Deepest nesting of parentheses a query may have: its groups are read recursively, each level a call. */
const MAX_QUERY_NESTING = 32;

/**
 * The closing parenthesis (its index) of each opening one (by index) of a masked query (see {@link maskQuoted}):
 * outside quotes, parentheses must balance, nested at most {@link MAX_QUERY_NESTING} deep.
 */
function parenthesisPairs(masked: string): Map<number, number> {
  const pairs = new Map<number, number>();
  const opened: number[] = [];
  for (let i = 0; i < masked.length; i++) {
    if (masked[i] === "(") {
      if (opened.push(i) > MAX_QUERY_NESTING) {
        throw validationError("Invalid search query", [{ path: "query", message: `nests parentheses over ${MAX_QUERY_NESTING} deep` }]);
      }
    } else if (masked[i] === ")") {
      const open = opened.pop();
      if (open === undefined) throw unbalancedParentheses();
      pairs.set(open, i);
    }
  }
  if (opened.length > 0) throw unbalancedParentheses();
  return pairs;
}

function unbalancedParentheses(): Error {
  return validationError("Invalid search query", [{ path: "query", message: "has unbalanced parentheses (outside quotes)" }]);
}

/**
 * The GLOB pattern of an unquoted `=` value holding `*`, as Conductor's index reads it (a query string's wildcard):
 * GLOB is case-sensitive like the exact compare, and a literal head can use the column's index. GLOB's own `?` and
 * `[` are made literal by wrapping each in a one-character class. D1 refuses a pattern over 50 bytes: a 400.
 */
function wildcardPattern(field: string, value: string): string {
  const pattern = value.replace(/[?[]/g, (c) => `[${c}]`);
  if (utf8Length(pattern) > MAX_LIKE_PATTERN_BYTES) {
    throw validationError("Invalid search query", [
      { path: "query", message: `${field}'s pattern "${value}" is too long: with a * in it, a value may be at most ${MAX_LIKE_PATTERN_BYTES} bytes (a ? or [ counted as 3)` },
    ]);
  }
  return pattern;
}

/**
 * D1 binds at most 100 parameters per statement: a list of any length (a caller's workflow names, a
 * `status=`/`workflowName=` list, a query's `IN (...)`) is bound as one JSON array and read with `json_each`. A list of
 * one value (the Conductor UI's `workflowType IN (x)`) is an equality ({@link addEquality}): SQLite cannot tell that a
 * `json_each` holds one row, so it would sort every row the list finds. Read the statement's `WHERE` with
 * {@link whereOf}. `column` holds text (see {@link addEquality}): a numeric column's list is cast as {@link applyClause} does.
 */
export function addIn(filter: Filter, column: string, values: readonly string[]): void {
  if (values.length === 1) {
    addEquality(filter, column, values[0]!);
    return;
  }
  if (NARROW_COLUMNS.has(column)) filter.narrowed = true;
  filter.clauses.push(`${column} IN (SELECT value FROM json_each(?))`);
  filter.bindings.push(JSON.stringify(values));
}

/** Most `AND` clauses a `query` may have: each binds a parameter, and D1 binds at most 100 per statement. */
export const MAX_QUERY_CLAUSES = 20;

/**
 * Prefix scopes bound one parameter each, so that the name index serves `workflow_name GLOB 'prefix*'`; a
 * caller with more is matched through one JSON array instead (a scan), which keeps the statement within D1's
 * 100 parameters.
 */
const MAX_BOUND_PREFIXES = 20;

function checkStatuses(values: string[], path: string): void {
  const unknown = values.filter((value) => !(WORKFLOW_STATUSES as readonly string[]).includes(value));
  if (unknown.length > 0) throw validationError("Invalid search", [{ path, message: `unknown status ${unknown.join(", ")}; expected one of ${WORKFLOW_STATUSES.join(", ")}` }]);
}

/**
 * The fields a search's `query` and `sort` may name, mapped to the columns of its table; a column whose name ends in
 * `_time` holds epoch milliseconds. `checkValues` refuses values a field cannot hold (statuses, states).
 */
export interface SearchFields {
  query: Record<string, string>;
  sort: Record<string, string>;
  /** ORDER BY when the request names no `sort`. */
  defaultOrder: string;
  /**
   * Time columns holding 0 until their time comes (an execution's `end_time` while it runs): such a row meets no
   * comparison of that field and sorts last, as a field Conductor's index does not hold.
   */
  unsetWhenZero?: readonly string[];
  /** Computed columns of this table holding numbers (besides those every table shares): compared with numbers, not text. */
  numeric?: readonly string[];
  checkValues?: (column: string, values: string[]) => void;
}

const EXECUTION_FIELDS: SearchFields = {
  query: QUERY_COLUMNS,
  sort: SORT_COLUMNS,
  defaultOrder: DEFAULT_ORDER,
  unsetWhenZero: ["end_time"],
  checkValues: (column, values) => {
    if (column === "status") checkStatuses(values, "query");
  },
};

/** A query being read: its text, the same text with the inside of its quoted strings masked, and its parentheses' pairs. */
interface QueryText {
  text: string;
  masked: string;
  pairs: Map<number, number>;
}

/** A connective joining two operands of a query, outside quotes and parentheses. */
const CONNECTIVE = /^(AND|OR)(?=[\s(]|$)/i;

/**
 * Applies Conductor's `query` syntax: clauses joined by AND or by OR, grouped in parentheses (`(a OR b) AND c`), each
 * `field IN (a, b)`, `field = value`, `field != value`, `field STARTS_WITH prefix`, `field IS [not] null`,
 * `field BETWEEN a AND b`, or `field` compared with `>`, `<`, `>=` or `<=`. An unquoted `*` in a text field's `=`
 * value is a wildcard, and `''` is the field absent or empty (see {@link textMatch}). AND and OR side by side without
 * parentheses (`a AND b OR c`) are a 400: Conductor's parser reads them right to left (`a AND (b OR c)`), where one
 * would expect AND first, so the query says which it means.
 */
export function applyQuery(filter: Filter, query: string, fields: SearchFields = EXECUTION_FIELDS): void {
  // `*` is everything, as in Conductor's searches (clients send it beside a freeText): no clause.
  if (query.trim() === "*") return;
  const masked = maskQuoted(query);
  applyExpression(filter, { text: query, masked, pairs: parenthesisPairs(masked) }, 0, query.length, fields, { clauses: 0 });
}

/**
 * Adds the condition of the query's text from `from` to `to`: clauses joined by AND (each added to `filter`, whose
 * clauses are joined by AND), or by OR (added as one clause), each clause perhaps a group in parentheses. A `field
 * BETWEEN a AND b` keeps its AND. `counted` counts the clauses read, which may be at most {@link MAX_QUERY_CLAUSES}.
 */
function applyExpression(filter: Filter, query: QueryText, from: number, to: number, fields: SearchFields, counted: { clauses: number }): void {
  const { masked, pairs } = query;
  // Parentheses around the whole of it group it and change nothing.
  for (;;) {
    while (from < to && /\s/.test(masked[from]!)) from++;
    while (to > from && /\s/.test(masked[to - 1]!)) to--;
    if (masked[from] !== "(" || pairs.get(from) !== to - 1) break;
    from++;
    to--;
  }
  if (from >= to) {
    throw validationError("Invalid search query", [{ path: "query", message: "lacks a clause: AND and OR need one on each side, and parentheses one inside" }]);
  }
  const operands: Array<[from: number, to: number]> = [];
  const connectives = new Set<string>();
  let operandFrom = from;
  let betweenTaken = false;
  for (let i = from; i < to; i++) {
    if (masked[i] === "(") {
      i = pairs.get(i)!;
      continue;
    }
    if (i > from && !/[\s)]/.test(masked[i - 1]!)) continue;
    const connective = CONNECTIVE.exec(masked.slice(i, Math.min(to, i + 4)))?.[1]?.toUpperCase();
    if (connective === undefined) continue;
    // The AND of `field BETWEEN a AND b` is its own.
    if (connective === "AND" && !betweenTaken && /^\s*\w+\s+BETWEEN\s+\S/i.test(masked.slice(operandFrom, i))) {
      betweenTaken = true;
      continue;
    }
    connectives.add(connective);
    operands.push([operandFrom, i]);
    operandFrom = i + connective.length;
    betweenTaken = false;
  }
  operands.push([operandFrom, to]);
  if (connectives.size > 1) {
    throw validationError("Invalid search query", [
      { path: "query", message: "joins clauses with AND and OR side by side: group them in parentheses to say which comes first, as (a OR b) AND c or a AND (b OR c)" },
    ]);
  }
  if (connectives.has("OR")) {
    const alternatives: string[] = [];
    let narrowed = true;
    for (const [operandStart, operandEnd] of operands) {
      const alternative: Filter = { clauses: [], bindings: [] };
      applyExpression(alternative, query, operandStart, operandEnd, fields, counted);
      alternatives.push(alternative.clauses.length === 1 ? conjunction(alternative) : `(${conjunction(alternative)})`);
      filter.bindings.push(...alternative.bindings);
      narrowed &&= alternative.narrowed === true;
    }
    filter.clauses.push(`(${alternatives.join(" OR ")})`);
    // Each alternative's rows found by a narrow column's index (`correlationId = a OR workflowId = b`): so are theirs.
    if (narrowed) filter.narrowed = true;
    return;
  }
  if (operands.length > 1) {
    for (const [operandStart, operandEnd] of operands) applyExpression(filter, query, operandStart, operandEnd, fields, counted);
    return;
  }
  // One clause: a group here is followed by more text, as `(a = 1) b = 2`.
  if (masked[from] === "(") {
    throw validationError("Invalid search query", [{ path: "query", message: "a group's closing parenthesis must be followed by AND, OR, another ) or the end of the query" }]);
  }
  const between = /^(\w+)\s+BETWEEN\s+(.+?)\s+AND\s+(.+)$/dis.exec(masked.slice(from, to));
  if (between !== null) {
    // Read as Conductor reads it: `field >= a` and `field <= b`.
    const part = (group: number) => query.text.slice(from + between.indices![group]![0], from + between.indices![group]![1]);
    applyClause(filter, `${part(1)} >= ${part(2)}`, fields, counted);
    applyClause(filter, `${part(1)} <= ${part(3)}`, fields, counted);
    return;
  }
  applyClause(filter, query.text.slice(from, to), fields, counted);
}

/** Adds the condition of one clause of a query, `field <operator> value` (see {@link applyQuery}), to `filter`. */
function applyClause(filter: Filter, clause: string, fields: SearchFields, counted: { clauses: number }): void {
  if (++counted.clauses > MAX_QUERY_CLAUSES) {
    throw validationError("Invalid search query", [{ path: "query", message: `has over ${MAX_QUERY_CLAUSES} clauses; at most ${MAX_QUERY_CLAUSES}` }]);
  }
  // Two-character operators first: with `>` tried before `>=`, `a >= 5` would compare a with "= 5". Matched on the
  // masked clause (a quoted `)` closes no list); the values are read from the clause itself, at the same places.
  const masked = /^\s*(\w+)\s*(?:(IN)\s*\(([^)]*)\)|(>=|<=|!=|<>|=|>|<|\s(?:STARTS_WITH|IS)\s)\s*(.+?))\s*$/di.exec(maskQuoted(clause));
  const match = masked === null ? null : masked.map((group, index) => (group === undefined ? undefined : clause.slice(...masked.indices![index]!)));
  const column = match ? columnOf(fields.query, match[1]!) : undefined;
  if (!match || !column) {
    throw validationError("Invalid search query", [
      {
        path: "query",
        message: `cannot understand "${clause.trim()}"; use field IN (a,b), field = value, field != value, field STARTS_WITH prefix, field BETWEEN a AND b, field IS null, field IS not null or field >, <, >=, <= n with fields ${Object.keys(fields.query).join(", ")}`,
      },
    ]);
  }
  const epoch = column.endsWith("_time");
  const numeric = epoch || NUMERIC_COLUMNS.has(column) || fields.numeric?.includes(column) === true;
  const checkEpoch = (value: string) => {
    if (epoch && !/^\d+$/.test(value)) throw validationError("Invalid search query", [{ path: "query", message: `${match[1]} must be compared with epoch milliseconds, not "${value}"` }]);
    if (numeric && !/^-?\d+$/.test(value)) throw validationError("Invalid search query", [{ path: "query", message: `${match[1]} must be compared with a whole number, not "${value}"` }]);
  };
  // A time not set yet is 0 (an execution that has not ended): like a field Conductor's index does not hold, it
  // meets no comparison (`endTime < n` finds no running execution).
  const isSet = fields.unsetWhenZero?.includes(column) === true ? `${column} > 0 AND ` : "";
  if (match[2]) {
    const values = splitOutsideQuotes(match[3]!, /,/g).map((item) => queryValue(item.trim())).filter(Boolean);
    fields.checkValues?.(column, values);
    values.forEach(checkEpoch);
    if (numeric) {
      // Bound as numbers: json_each gives text, which a computed column (executionTime) would never equal.
      filter.clauses.push(`${column} IN (SELECT CAST(value AS INTEGER) FROM json_each(?))`);
      filter.bindings.push(JSON.stringify(values));
    } else addIn(filter, column, values);
    if (isSet !== "") filter.clauses.push(`${column} > 0`);
    return;
  }
  const operator = match[4]!.trim().toUpperCase();
  if (operator === "IS") {
    filter.clauses.push(presenceClause(column, match[1]!, match[5]!, numeric, isSet !== ""));
    return;
  }
  const raw = queryValue(match[5]!);
  if (operator === "STARTS_WITH") {
    if (numeric) throw validationError("Invalid search query", [{ path: "query", message: `${match[1]} holds numbers: STARTS_WITH compares text` }]);
    // The prefix bound once: each clause of a query binds at most one parameter, which keeps a search within D1's 100.
    // As a GLOB pattern when D1 takes it: a column's index serves it (`workflowType STARTS_WITH billing_`), where a
    // computed compare scans every row; a longer prefix is compared by its head.
    const pattern = globPrefix(raw);
    if (utf8Length(pattern) <= MAX_LIKE_PATTERN_BYTES) {
      filter.clauses.push(`${column} GLOB ?`);
      filter.bindings.push(pattern);
    } else {
      filter.clauses.push(`EXISTS (SELECT 1 FROM (SELECT ? AS value) AS prefix WHERE substr(${column}, 1, length(prefix.value)) = prefix.value)`);
      filter.bindings.push(raw);
    }
    return;
  }
  const equality = operator === "=" || operator === "!=" || operator === "<>";
  if (equality && !numeric && textMatch(filter, column, operator === "=", match[1]!, match[5]!, fields)) return;
  if (equality) fields.checkValues?.(column, [raw]);
  checkEpoch(raw);
  const value = numeric ? Number(raw) : raw;
  if (operator === "!=" || operator === "<>") {
    // As Conductor's index, whose NOT also finds the rows that do not hold the field at all.
    filter.clauses.push(`(${column} IS NULL OR ${column} <> ?)`);
  } else if (operator === "=" && typeof value === "string") {
    addEquality(filter, column, value);
    return;
  } else filter.clauses.push(`(${isSet}${column} ${operator} ?)`);
  filter.bindings.push(value);
}

/**
 * The clause of `field IS null` (the field absent: empty text, as `= ''`, or a time not set yet) or `field IS not null`
 * (present), as Conductor's query parser reads `IS` (its Elasticsearch 8 index: a `missing` or an `exists` query on the
 * field). The value is the word `null` or `not null`, unquoted, case ignored; anything else is a 400.
 */
function presenceClause(column: string, field: string, written: string, numeric: boolean, unsetWhenZero: boolean): string {
  const value = written.trim().toLowerCase().replace(/\s+/g, " ");
  if (value !== "null" && value !== "not null") {
    throw validationError("Invalid search query", [{ path: "query", message: `${field} IS takes null or not null, not "${written.trim()}"` }]);
  }
  const absent = !numeric ? `(${column} IS NULL OR ${column} = '')` : unsetWhenZero ? `(${column} IS NULL OR ${column} = 0)` : `${column} IS NULL`;
  return value === "null" ? absent : `NOT (${absent})`;
}

/**
 * Adds the clause of `field = value` (or, not `equal`, `!=`) on a text column when the value is not compared as it
 * stands, and says whether it did: an unquoted value with `*` is a wildcard pattern (its `!=` also finds the rows
 * without the field, as any `!=`), and an empty value (`''`) is the field absent or empty, since Conductor's
 * Postgres index holds "" where ours holds NULL (`parentWorkflowId = ''` finds the top-level executions).
 */
function textMatch(filter: Filter, column: string, equal: boolean, field: string, written: string, fields: SearchFields): boolean {
  const value = readQueryValue(written);
  if (!value.quoted && value.text.includes("*")) {
    filter.clauses.push(equal ? `${column} GLOB ?` : `(${column} IS NULL OR ${column} NOT GLOB ?)`);
    filter.bindings.push(wildcardPattern(field, value.text));
    return true;
  }
  if (value.text !== "") return false;
  fields.checkValues?.(column, [""]);
  filter.clauses.push(equal ? `(${column} IS NULL OR ${column} = '')` : `(${column} IS NOT NULL AND ${column} <> '')`);
  return true;
}

/**
 * The ORDER BY terms of Conductor's `sort`: `field[:ASC|DESC]`, several joined by `|` (as Conductor's
 * WorkflowResource splits them); a field without a direction sorts ascending, as Conductor's SortOrder.
 */
export function orderBy(sort: string | undefined, fields: SearchFields = EXECUTION_FIELDS): string {
  if (sort === undefined) return fields.defaultOrder;
  const terms = sort.split("|");
  // More than a table's columns is nothing a sort can mean, and SQLite refuses a long ORDER BY.
  if (terms.length > MAX_SORT_TERMS) throw validationError("Invalid search", [{ path: "sort", message: `has ${terms.length} terms joined by |; at most ${MAX_SORT_TERMS}` }]);
  return terms.map((term) => sortTerm(term, fields)).join(", ");
}

/** Most terms a `sort` may join. */
const MAX_SORT_TERMS = 10;

function sortTerm(term: string, fields: SearchFields): string {
  const [column, direction] = sortColumnAndDirection(term, fields);
  // A value a row lacks (NULL: no correlation id, no reason) sorts last either way, as Conductor's Elasticsearch index
  // sorts a missing field (`missing: _last`), where SQLite puts NULL first ascending. SQLite still walks a column's
  // index for it (the plans of the indexed sorts are unchanged).
  const ordered = `${column} ${direction} NULLS LAST`;
  // A time not set yet (0) sorts last either way, as a field Conductor's index does not hold.
  return fields.unsetWhenZero?.includes(column) === true ? `(${column} = 0), ${ordered}` : ordered;
}

function sortColumnAndDirection(term: string, fields: SearchFields): [column: string, direction: string] {
  // A direction alone (the Java client's scheduler search sends `sort=ASC`) orders by the default order's field.
  const bare = /^\s*(ASC|DESC)\s*$/i.exec(term);
  if (bare) return [fields.defaultOrder.split(" ")[0]!, bare[1]!.toUpperCase()];
  const match = /^\s*(\w+)\s*(?::\s*(ASC|DESC)\s*)?$/i.exec(term);
  const column = match ? columnOf(fields.sort, match[1]!) : undefined;
  if (!match || !column) {
    throw validationError("Invalid search", [
      { path: "sort", message: `cannot understand "${term.trim()}"; use field[:ASC|DESC] or ASC|DESC alone, several joined by |, with field one of ${Object.keys(fields.sort).join(", ")}` },
    ]);
  }
  return [column, (match[2] ?? "ASC").toUpperCase()];
}

/** Limits `filter` to the rows (of `table`, by its `workflow_name`) of workflows the caller may read, as search does. */
export function applyReadable(filter: Filter, readable: NameFilter, table = "executions"): void {
  applyReadableAny(filter, [{ readable, column: `${table}.workflow_name` }]);
}

/**
 * Limits `filter` to the rows where any of `conditions` holds: the row's `column` (qualified by its table) is one of
 * the names its `readable` lets through. No limit when one lets every name through; nothing when none lets any.
 */
export function applyReadableAny(filter: Filter, conditions: ReadonlyArray<{ readable: NameFilter; column: string }>): void {
  const terms: NameTerm[] = [];
  for (const { readable, column } of conditions) {
    const these = nameTerms(column, readable);
    if (these === "every") return;
    terms.push(...these);
  }
  // A caller with nothing readable sees nothing rather than an error: search is allowed, the list is empty.
  filter.clauses.push(anyNameTerm(terms));
  filter.bindings.push(...terms.flatMap((term) => term.binds));
}

/** One alternative of a name condition ({@link nameTerms}): SQL and its parameters. */
export interface NameTerm {
  sql: string;
  binds: string[];
}

/** The SQL keeping the rows meeting any of `terms` (from {@link nameTerms}); none: no row. */
export function anyNameTerm(terms: readonly NameTerm[]): string {
  return terms.length > 0 ? `(${terms.map((term) => term.sql).join(" OR ")})` : "0";
}

/**
 * The alternatives keeping the rows whose `column` (a name) `filter` lets through, as the permission check
 * (`scopeCovers`) decides: exact names, and names whose UTF-8 bytes start with a prefix's. Any one lets a row through
 * (none: no row); "every" when the filter lets every name through. The one place search, the lookups, the metrics and
 * the listings turn a {@link NameFilter} into SQL.
 *
 * Few short prefixes are GLOB patterns, which the name index serves (SQLite reads a pattern's literal head as a range
 * of the index); the rest, and any holding a NUL, are compared as bytes against one JSON list, which reads every row
 * the rest of the statement leaves. GLOB reads its pattern and the name as C strings, to their first NUL: `a\0*`
 * would match the name `a` (a grant at `workflow:a\0*` showing workflow `a`), so a prefix with a NUL is never one.
 * Without a NUL in it, a prefix is a prefix of a name exactly when it is one of the name up to its first NUL, so the
 * pattern's answer is the bytes' answer.
 */
export function nameTerms(column: string, filter: NameFilter): NameTerm[] | "every" {
  if (filter === "every") return "every";
  const terms: NameTerm[] = [];
  // json_each keeps a name's NUL (`\u0000`), and SQLite compares text as bytes, to its full length.
  if (filter.names.length > 0) terms.push({ sql: `${column} IN (SELECT value FROM json_each(?))`, binds: [JSON.stringify(filter.names)] });
  const compared: string[] = [];
  for (const prefix of filter.prefixes) {
    const pattern = globPrefix(prefix);
    const globbed = filter.prefixes.length <= MAX_BOUND_PREFIXES && !prefix.includes("\u0000") && utf8Length(pattern) <= MAX_LIKE_PATTERN_BYTES;
    if (globbed) terms.push({ sql: `${column} GLOB ?`, binds: [pattern] });
    else compared.push(prefix);
  }
  if (compared.length > 0) {
    // As bytes (UTF-8), the prefix as the name's first bytes: length() and substr() of text stop at a NUL, of a blob not.
    terms.push({
      sql: `EXISTS (SELECT 1 FROM json_each(?) AS prefix WHERE substr(CAST(${column} AS BLOB), 1, length(CAST(prefix.value AS BLOB))) = CAST(prefix.value AS BLOB))`,
      binds: [JSON.stringify(compared)],
    });
  }
  return terms;
}

/**
 * A GLOB pattern for the names starting with `prefix`, matched as the permission check matches
 * them (`startsWith`): GLOB is case-sensitive where LIKE ignores ASCII case, and a pattern with a
 * literal head can use the name index. Its metacharacters in the prefix are made literal by
 * wrapping each in a one-character class.
 */
function globPrefix(prefix: string): string {
  return `${prefix.replace(/[*?[]/g, (c) => `[${c}]`)}*`;
}

/**
 * The fewest hits a search counts before it stops counting: Elasticsearch's default `track_total_hits`, so that
 * `totalHits` is what Conductor on its Elasticsearch 7 index reports for a large result (10,000, a lower bound).
 */
export const COUNTED_HITS = 10_000;

/**
 * The statement counting a search's hits (`total`) in `table` under `where`, reading at most
 * `max(COUNTED_HITS, start + size + 1)` of them: the exact count when fewer match, else that bound. A COUNT reads every
 * row it counts (D1 bills each), and the UI's list asks on every page. The bound is never below the page's end plus
 * one, so a page that has rows after it reports more hits than its end: a pager (the UI's, a client's `while start <
 * totalHits`) always finds the next page, past 10,000 too (where Elasticsearch's default `max_result_window` refuses).
 */
export function countHits(db: D1Database, table: string, where: string, bindings: readonly (string | number)[], page: { start: number; size: number }): D1PreparedStatement {
  return db.prepare(`SELECT COUNT(*) AS total FROM (SELECT 1 FROM ${table} ${where} LIMIT ?)`).bind(...bindings, Math.max(COUNTED_HITS, page.start + page.size + 1));
}

/** A search's page: `start` (offset) and `size` (at most {@link MAX_SEARCH_SIZE}, 100 unless given). */
export function searchPage(request: IRequest): { start: number; size: number } {
  return { start: intParam(request, "start", 0, 0, 1_000_000), size: intParam(request, "size", 100, 0, MAX_SEARCH_SIZE) };
}

/** The request's query parameter `name`, trimmed; undefined when absent or blank. */
export function searchParam(request: IRequest, name: string): string | undefined {
  return param(request, name);
}

/**
 * The scheduler searches' `sort`, given once or repeated (`sort=name&sort=workflowId:DESC`, as Orkes' docs write it:
 * Spring binds Conductor's `List<String> sort` from each), its terms joined by `|`; a `sort` after the first was dropped.
 */
export function sortParams(request: IRequest): string | undefined {
  const value = request.query["sort"];
  const given = (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((text) => text.trim()).filter((text) => text !== "");
  return given.length === 0 ? undefined : given.join("|");
}

/**
 * One Lucene term `field:value` of a freeText, its value unquoted (no quote, backslash or parenthesis, which the query
 * parser would read) or in double quotes, as Conductor's Elasticsearch index reads a freeText (a query_string query).
 */
const FREE_TEXT_TERM = /(\w+):("(?:[^"\\]|\\[\s\S])*"|[^\s"'()\\]+)/g;

/**
 * A whole freeText of such terms joined by ` AND `, by ` OR `, or side by side: Elasticsearch's default operator, OR,
 * which Conductor's query string keeps.
 */
const FREE_TEXT_TERMS = new RegExp(`^\\s*${FREE_TEXT_TERM.source}(?:\\s+(?:(?:AND|OR)\\s+)?${FREE_TEXT_TERM.source})*\\s*$`);

/** What joins term `i` of a freeText to the one before it: AND, or OR (written, or the terms side by side). */
function connectiveBefore(freeText: string, terms: readonly RegExpExecArray[], i: number): string {
  const before = terms[i - 1]!;
  return freeText.slice(before.index + before[0].length, terms[i]!.index).trim() === "AND" ? "AND" : "OR";
}

/**
 * Reads a freeText made only of `field:value` terms (`correlationId:order-*`, `status:FAILED AND workflowType:x`,
 * `status:FAILED OR status:TIMED_OUT`) whose fields `fields.query` knows as the `query` conditions `field = value`,
 * and says whether it did; anything else (a bare word, an unknown field, a value a field cannot hold, AND and OR
 * together, ranges, a URL) is left to the substring search, since a freeText was never refused.
 */
function applyFreeTextTerms(filter: Filter, freeText: string, fields: SearchFields): boolean {
  if (!FREE_TEXT_TERMS.test(freeText)) return false;
  const terms = [...freeText.matchAll(FREE_TEXT_TERM)];
  if (!terms.every((term) => columnOf(fields.query, term[1]!) !== undefined)) return false;
  const conditions: Filter = { clauses: [], bindings: [] };
  try {
    applyQuery(conditions, terms.map((term, i) => `${i === 0 ? "" : `${connectiveBefore(freeText, terms, i)} `}${term[1]} = ${term[2]}`).join(" "), fields);
  } catch (error) {
    // A refused condition (`status:failed`, `startTime:today`) is text to find, not a 400.
    if (error instanceof ApiError && error.status === 400) return false;
    throw error;
  }
  appendFilter(filter, conditions);
  return true;
}

/**
 * Conductor's `freeText` (`*` or none: everything): rows with the text in one of `columns`, as a substring, ASCII case
 * ignored; a `*` inside it matches any text (`order-1*`, as Conductor's query string reads it). Within double quotes
 * (`"order-123"`, as the Conductor UI asks for free text) the text is taken literally, `*` included. With `fields`,
 * a freeText of `field:value` terms is read as conditions (see {@link applyFreeTextTerms}). `path` names the
 * parameter in a refusal.
 */
export function applyFreeText(filter: Filter, given: string | undefined, columns: readonly string[], options: { path?: string; fields?: SearchFields } = {}): void {
  if (given === undefined || given === "*") return;
  if (options.fields !== undefined && applyFreeTextTerms(filter, given, options.fields)) return;
  const path = options.path ?? "freeText";
  const quoted = given.length >= 2 && given.startsWith('"') && given.endsWith('"');
  const freeText = quoted ? given.slice(1, -1) : given;
  if (freeText === "") return;
  const stars = !quoted && freeText.includes("*");
  const escaped = freeText.replace(/[\\%_]/g, (c) => `\\${c}`);
  const pattern = `%${stars ? escaped.replaceAll("*", "%") : escaped}%`;
  const fits = utf8Length(pattern) <= MAX_LIKE_PATTERN_BYTES;
  if (!fits && !stars) {
    // A substring longer than a LIKE pattern D1 takes (50 bytes): found with instr, ASCII case ignored as LIKE ignores
    // it (SQLite's lower() folds ASCII only). LIKE otherwise: it lowers no copy of every row.
    filter.clauses.push(`(${columns.map((column) => `instr(lower(${column}), ?) > 0`).join(" OR ")})`);
    filter.bindings.push(...columns.map(() => asciiLowerCase(freeText)));
    return;
  }
  if (!fits) {
    throw validationError("Invalid search", [{ path, message: `with a * in it, may be at most ${MAX_LIKE_PATTERN_BYTES - 2} bytes (its % and _ counted twice); without one, of any length` }]);
  }
  filter.clauses.push(`(${columns.map((column) => `${column} LIKE ? ESCAPE '\\'`).join(" OR ")})`);
  filter.bindings.push(...columns.map(() => pattern));
}

/** The longest LIKE or GLOB pattern D1 takes, in bytes. */
export const MAX_LIKE_PATTERN_BYTES = 50;

const encoder = new TextEncoder();

/** The length of `text` in UTF-8 bytes, as D1 counts a pattern. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** `text` with ASCII capitals made small, as SQLite's `lower()` makes them, and nothing else. */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * `GET /api/workflow/search`: Conductor's `SearchResult<WorkflowSummary>` from the execution index,
 * limited to the workflows the caller may read. With `byTasks` (`search-by-tasks`), the request's `query` and
 * `freeText` have been read as a task search's into that filter, and the executions found are those holding a task it
 * keeps.
 */
export async function searchExecutions(db: D1Database, request: IRequest, readable: NameFilter, byTasks?: Filter): Promise<{ totalHits: number; results: JsonObject[] }> {
  const { start, size } = searchPage(request);
  const filter: Filter = { clauses: [], bindings: [] };
  applyReadable(filter, readable);
  const status = param(request, "status");
  if (status) {
    const statuses = listOf(status);
    checkStatuses(statuses, "status");
    addIn(filter, "status", statuses);
  }
  const name = param(request, "workflowName") ?? param(request, "workflowType");
  if (name) addIn(filter, "workflow_name", listOf(name));
  const correlationId = param(request, "correlationId");
  if (correlationId) addIn(filter, "correlation_id", [correlationId]);
  if (byTasks !== undefined) {
    filter.clauses.push(`workflow_id IN (SELECT workflow_id FROM task_index ${whereOf(byTasks)})`);
    filter.bindings.push(...byTasks.bindings);
  } else {
    const query = param(request, "query");
    if (query) applyQuery(filter, query);
    applyFreeText(filter, param(request, "freeText"), ["workflow_id", "correlation_id", "workflow_name", "reason", "input", "output"], { fields: EXECUTION_FIELDS });
  }
  const order = orderBy(param(request, "sort"));
  const where = whereOf(filter);
  const [count, page] = await db.batch([
    countHits(db, "executions", where, filter.bindings, { start, size }),
    db
      .prepare(
        `SELECT workflow_id AS workflowId, workflow_name AS workflowName, workflow_version AS workflowVersion, status,
           correlation_id AS correlationId, reason AS reasonForIncompletion, parent_workflow_id AS parentWorkflowId,
           create_time AS createTime, start_time AS startTime, end_time AS endTime, update_time AS updateTime, input, output, priority,
           failed_reference_task_names AS failedReferenceTaskNames, failed_task_names AS failedTaskNames, event
         FROM executions ${where} ORDER BY ${order}, workflow_id LIMIT ? OFFSET ?`,
      )
      .bind(...filter.bindings, size, start),
  ]);
  const totalHits = (count!.results[0] as { total: number } | undefined)?.total ?? 0;
  return { totalHits, results: (page!.results as unknown as WorkflowSummaryRow[]).map(toWorkflowSummary) };
}
