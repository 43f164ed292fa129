/**
 * Building blocks shared by the workflow-definition validator and the per-task-type validators,
 * so every rule reports in the same shape: `<field> must be <expected>, but received <what>`,
 * at a {@link ValidationIssue} path such as `tasks[1].inputParameters.uri`.
 */
import * as v from "valibot";
import { hasExpression, referencedSecrets } from "../expressions";
import { isHeaderName, TOKEN_DESCRIPTION } from "../http-syntax";
import type { JsonObject, JsonValue } from "../model";
import { childPath, type ValidationIssue } from "../validation-issue";

/** A JSON object as received, before anything about its values is known. */
export type UnknownRecord = { readonly [key: string]: unknown };

/** Valibot schema accepting unknown input and producing `T`. */
export type Rule<T> = v.GenericSchema<unknown, T>;

/** True for a plain object (not an array, not null): valibot's own object check lets arrays through. */
export function isRecord(value: unknown): value is UnknownRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a string that is not empty once surrounding whitespace is removed. */
export function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

/** True for any string. */
export function isString(value: unknown): value is string {
  return typeof value === "string";
}

/** True for a boolean. */
export function isBoolean(value: unknown): value is boolean {
  return typeof value === "boolean";
}

/** A test for a safe integer within `[min, max]`; safe so that stored values survive a JSON round trip. */
export function isIntegerIn(min: number, max: number): (value: unknown) => value is number {
  return (value): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** A test for membership in a fixed list of strings (case-sensitive). */
export function isOneOf<const T extends string>(options: readonly T[]): (value: unknown) => value is T {
  const set: ReadonlySet<unknown> = new Set(options);
  return (value): value is T => set.has(value);
}

/** True for a string holding a `${...}` expression, whose value is only known at run time. */
export function isExpression(value: unknown): value is string {
  return typeof value === "string" && hasExpression(value);
}

/**
 * Lets a run-time expression stand in for a value: such a string cannot be checked before the
 * workflow runs, so it passes here and is checked (by the task itself) once resolved.
 */
export function orExpression(test: (value: unknown) => boolean): (value: unknown) => boolean {
  return (value) => isExpression(value) || test(value);
}

/**
 * True when `value` is made only of JSON values (finite numbers, plain objects, arrays...).
 * Input parsed from a request always is; the check keeps direct callers from storing `undefined`,
 * functions or class instances in a definition. Iterative so deep nesting cannot overflow the stack.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  const pending: unknown[] = [value];
  // A value met twice is either shared (still JSON) or a cycle; either way it was already queued.
  const seen = new Set<object>();
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item === "string" || typeof item === "boolean") continue;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return false;
      continue;
    }
    if (typeof item !== "object") return false;
    if (seen.has(item)) continue;
    seen.add(item);
    if (Array.isArray(item)) {
      for (const element of item) pending.push(element);
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(item);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const element of Object.values(item)) pending.push(element);
  }
  return true;
}

/** True for a plain object holding only JSON values. */
export function isJsonObject(value: unknown): value is JsonObject {
  return isRecord(value) && isJsonValue(value);
}

/** A character of an unquoted word of an address's local part (RFC 5322's atext, and any non-ASCII one). */
const EMAIL_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u0080-\\uFFFF-]";
/** A character of a quoted word of an address's local part: an atom's, or a space, `.`, `(`, `)`, `,`, `<`, `>`, `[`, `]`, `:`, `;`, `@`, or an escaped `\\` or `"`. */
const EMAIL_QUOTED = "(?:[A-Za-z0-9!#$%&'*.(),<>\\[\\]:; @+/=?^_`{|}~\\u0080-\\uFFFF-]|\\\\\\\\|\\\\\")";
const EMAIL_WORD = `(?:${EMAIL_ATOM}+|"${EMAIL_QUOTED}+")`;
const EMAIL_LOCAL_PART = new RegExp(`^${EMAIL_WORD}(?:\\.${EMAIL_WORD})*$`);
/** A character of a domain label other than `-`: Hibernate's takes RFC 5322's atext there too (`my_host`). */
const EMAIL_DOMAIN_CHAR = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u0080-\\uFFFF]";
const EMAIL_DOMAIN_LABEL = new RegExp(`^${EMAIL_DOMAIN_CHAR}+(?:-+${EMAIL_DOMAIN_CHAR}+)*$`);
const IPV4_LITERAL = /^\[\d{1,3}(?:\.\d{1,3}){3}\]$/;
const IPV6_LITERAL = /^\[IPv6:([0-9A-Fa-f:.]+)\]$/i;

/**
 * An e-mail address as Conductor's `@Email` (Hibernate Validator's AbstractEmailValidator and DomainNameUtil) takes it:
 * a local part of at most 64 characters of dot-separated words, each plain (`first.last+tag`) or quoted (`"john doe"`,
 * where a space, `@` and escaped quotes are allowed); a domain that needs no dot, so `test@test`, which the Python SDK's
 * own tests register with, and `dev@localhost` are addresses, whose labels may hold `_` (`ops@build_host.internal`), or an
 * IP literal (`x@[127.0.0.1]`, `x@[IPv6:2001:db8::1]`).
 */
export function isEmailAddress(value: string): boolean {
  const at = value.lastIndexOf("@");
  if (at <= 0 || at > 64) return false;
  return EMAIL_LOCAL_PART.test(value.slice(0, at)) && isEmailDomain(value.slice(at + 1));
}

/** An address's domain: a host name of at most 255 characters whose labels have at most 63, or an IP literal. */
function isEmailDomain(domain: string): boolean {
  if (IPV4_LITERAL.test(domain)) return true;
  const ipv6 = IPV6_LITERAL.exec(domain);
  if (ipv6) return isIpv6Address(ipv6[1]!);
  if (domain === "" || domain.length > 255) return false;
  return domain.split(".").every((label) => label.length <= 63 && EMAIL_DOMAIN_LABEL.test(label));
}

/** An IPv6 address: eight groups of 1 to 4 hex digits, `::` standing once for one or more zero groups, the last two as an IPv4 address if wanted. */
function isIpv6Address(text: string): boolean {
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === "" ? [] : half.split(":")));
  const last = groups.at(-1);
  const embedded = last !== undefined && last.includes(".");
  if (embedded && !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(last)) return false;
  const hex = embedded ? groups.slice(0, -1) : groups;
  if (!hex.every((group) => /^[0-9A-Fa-f]{1,4}$/.test(group))) return false;
  const count = hex.length + (embedded ? 2 : 0);
  return halves.length === 2 ? count <= 7 : count === 8;
}

/**
 * Deepest nesting accepted in a definition's JSON values (a top-level object is depth 1). Those
 * values are later walked recursively (template checks, run-time resolution), so a limit turns a
 * hostile payload into a validation error instead of a stack overflow.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Largest value of a field Conductor's Java models hold as an `int` or `Integer` (a definition's version, a task
 * definition's limits): a larger one stored here would make a Java client fail to read the whole answer holding it.
 */
export const MAX_JAVA_INT = 2_147_483_647;

/** True when arrays and objects inside `value` nest deeper than `max` levels. Iterative, so it cannot overflow itself. */
export function exceedsJsonDepth(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * True when `value` holds a number JSON cannot carry (Infinity, NaN): JSON.parse turns `1e309` into
 * Infinity, which expressions would see while storage shows null. Iterative, like {@link exceedsJsonDepth}.
 */
export function holdsNonFiniteNumber(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "number" && !Number.isFinite(item)) return true;
    if (typeof item === "object" && item !== null) for (const child of Object.values(item)) pending.push(child);
  }
  return false;
}

/** The message for a value that holds a number JSON cannot carry. */
export const NON_FINITE_MESSAGE = "must hold only finite numbers: 1e309 and the like do not fit in JSON";

/** A {@link JsonObject} within {@link MAX_JSON_DEPTH}: safe to store and to walk recursively. */
export function isBoundedJsonObject(value: unknown): value is JsonObject {
  return isJsonObject(value) && !exceedsJsonDepth(value);
}

/**
 * Describes a received value for a message, e.g. `the string "get"` or `an array of 2 items`.
 * Long strings are cut so a message stays readable.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") {
    if (value.length <= 60) return `the string ${JSON.stringify(value)}`;
    return `the string ${JSON.stringify(value.slice(0, 60))}… (${value.length} characters)`;
  }
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return "an empty array";
    return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  }
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** What each rule expects, so a missing required key can be reported with the same wording. */
const EXPECTATIONS = new WeakMap<object, string>();

/** Records what `schema` expects (used for "is required" messages of schemas not built by {@link rule}). */
export function expecting<S extends object>(schema: S, expected: string): S {
  EXPECTATIONS.set(schema, expected);
  return schema;
}

/**
 * A schema passing values for which `test` holds, with the message
 * `<field> must be <expected>, but received <value>`. One issue per field, however many ways it is wrong.
 */
export function rule<T>(field: string, expected: string, test: (value: unknown) => boolean): Rule<T> {
  const schema = v.custom<T>(test, (issue) => `${field} must be ${expected}, but received ${describeValue(issue.input)}`);
  return expecting(schema, expected);
}

/** What Java's `String.trim` removes, which Jackson applies to a JSON string before reading a number or boolean from it: characters up to U+0020. */
const JAVA_TRIMMED = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/**
 * A whole number as text as Jackson reads it into an int, Integer or long field of Conductor's and Orkes' models (its
 * ALLOW_COERCION_OF_SCALARS, on by default): decimal digits with an optional sign (`"30"`, `"+5"`, `"-1"`, `"007"`),
 * surrounding spaces and control characters ignored. At most 15 digits, so the number is exact; no fraction (`"1.0"`),
 * exponent or hex, which Jackson refuses for an int too.
 */
const JACKSON_INTEGER_TEXT = /^[+-]?\d{1,15}$/;

/**
 * `value` as Jackson reads it into an integer field: the number a string of digits stands for (see
 * {@link JACKSON_INTEGER_TEXT}), anything else as given, for the field's own rule to take or refuse with its message.
 */
export function integerFromText(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const text = value.replace(JAVA_TRIMMED, "");
  // `+ 0` makes "-0" the 0 it reads as, not -0.
  return JACKSON_INTEGER_TEXT.test(text) ? Number(text) + 0 : value;
}

/**
 * `value` as Jackson reads it into a boolean field: the text `true`, `True` or `TRUE` (`false`, `False`, `FALSE`), spaces
 * around ignored, as that boolean; a whole number as `false` for 0 and `true` for any other (Jackson's
 * `_coerceBooleanFromInt`, allowed by ALLOW_COERCION_OF_SCALARS: `"optional": 1`); anything else as given (`"yes"`,
 * `"1"`, `"tRuE"`, a fraction, which Jackson refuses too). JSON.parse leaves no trace of how a number was written, so
 * `1.0` and `1e0`, which Jackson refuses for a boolean, are taken as 1.
 */
export function jacksonBooleanOf(value: unknown): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? value !== 0 : value;
  if (typeof value !== "string") return value;
  const text = value.replace(JAVA_TRIMMED, "");
  if (text === "true" || text === "True" || text === "TRUE") return true;
  if (text === "false" || text === "False" || text === "FALSE") return false;
  return value;
}

/**
 * True for text Jackson reads into a number or boolean field as it reads a JSON null: `""` and blank text (its
 * empty-String coercion, null for a scalar: CoercionConfigs.findCoercion, findCoercionFromBlankString) and `"null"` (its
 * textual null, under ALLOW_COERCION_OF_SCALARS), spaces and control characters around ignored as Java's trim does.
 */
export function isJacksonNullText(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const text = value.replace(JAVA_TRIMMED, "");
  return text === "" || text === "null";
}

/**
 * `value` as Jackson reads it into an Integer or Long (a wrapper) of Conductor's and Orkes' models: undefined for none
 * (absent, null, and the text it reads as null: {@link isJacksonNullText}), the number for its digits as text (a sign
 * and spaces around allowed: {@link integerFromText}), anything else as given, for the field's own check.
 */
export function wrapperIntegerOf(value: unknown): unknown {
  if (value === undefined || value === null || isJacksonNullText(value)) return undefined;
  return integerFromText(value);
}

/**
 * What Jackson sets a number or boolean field of one of Conductor's models to when it reads null there (JSON null, or
 * {@link isJacksonNullText}): by name, 0 or false for a Java primitive (int, long, boolean: Conductor's server turns
 * FAIL_ON_NULL_FOR_PRIMITIVES off), or `"unset"` for a wrapper (Integer, Boolean), whose null is a field left out.
 */
export type JacksonNulls = Readonly<Record<string, 0 | false | "unset">>;

/**
 * `fields` with the text Jackson reads as null in the number and boolean fields `nulls` names read as it reads it
 * there: a primitive's 0 or false, stored as such, or a wrapper's none (the field left out, so its default applies).
 * With `jsonNull`, a JSON null there is read so too (as Jackson reads it); without, it is left as it is. The same object
 * when there is none. Other fields, and other text, are left to their rules.
 */
export function withJacksonNullText(fields: Record<string, unknown>, nulls: JacksonNulls, { jsonNull = false } = {}): Record<string, unknown> {
  const readAsNull = (value: unknown) => isJacksonNullText(value) || (jsonNull && value === null);
  const read = (key: string, value: unknown) => (Object.hasOwn(nulls, key) && readAsNull(value) ? nulls[key] : undefined);
  if (!Object.entries(fields).some(([key, value]) => read(key, value) !== undefined)) return fields;
  return Object.fromEntries(
    Object.entries(fields).flatMap(([key, value]) => {
      const zero = read(key, value);
      if (zero === undefined) return [[key, value]];
      return zero === "unset" ? [] : [[key, zero]];
    }),
  );
}

/**
 * `value` as Jackson reads it into a Java enum whose constants are `javaOrder`, in their declaration order: a whole
 * number, or text of decimal digits (spaces around ignored), is the constant at that position when there is one
 * (EnumDeserializer's _fromInteger and _deserializeAltString; Conductor's server leaves FAIL_ON_NUMBERS_FOR_ENUMS off);
 * anything else as given, for the field's rule to take by name or refuse.
 */
export function enumConstantAt(value: unknown, javaOrder: readonly string[]): unknown {
  const text = typeof value === "string" ? value.replace(JAVA_TRIMMED, "") : undefined;
  const position = typeof value === "number" ? value : text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : undefined;
  return position !== undefined && Number.isInteger(position) && position >= 0 && position < javaOrder.length ? javaOrder[position] : value;
}

/** `schema`, an enum field's rule, taking a constant also by its position in `javaOrder` ({@link enumConstantAt}), as Jackson does. */
export function enumOrItsPosition<T>(schema: Rule<T>, javaOrder: readonly string[]): Rule<T> {
  return readingFirst(schema, (value) => enumConstantAt(value, javaOrder), `one of ${javaOrder.join(", ")}`);
}

/** `schema` reading what it is given through `read` first; expecting what `schema` expects. */
function readingFirst<T>(schema: Rule<T>, read: (value: unknown) => unknown, fallback: string): Rule<T> {
  return expecting(v.pipe(v.unknown(), v.transform(read), schema), EXPECTATIONS.get(schema) ?? fallback);
}

/**
 * `schema` taking a whole number also as its text (`"2500"` as 2500: {@link integerFromText}), as Jackson coerces a JSON
 * string into the int fields of Conductor's and Orkes' models. Anything else reaches `schema` as given, and is refused
 * (or taken) there with its own message. The number is what is stored, never the text: engines and clients read it so.
 */
export function integerOrItsDigits<T>(schema: Rule<T>): Rule<T> {
  return readingFirst(schema, integerFromText, "an integer");
}

/** `schema` taking a boolean also as its text (`"true"`: {@link jacksonBooleanOf}), as Jackson coerces it; stored as the boolean. */
function booleanOrItsText<T>(schema: Rule<T>): Rule<T> {
  return readingFirst(schema, jacksonBooleanOf, "a boolean");
}

/** A {@link rule} for a boolean field (`<field> must be a boolean...`) that takes its text too ({@link booleanOrItsText}). */
export function booleanRule(field: string): Rule<boolean> {
  return booleanOrItsText(rule<boolean>(field, "a boolean", isBoolean));
}

/** A {@link rule} for a safe integer in `[min, max]` that takes its digits as text too ({@link integerOrItsDigits}). */
export function integerRule(field: string, expected: string, min: number, max: number): Rule<number> {
  return integerOrItsDigits(rule<number>(field, expected, isIntegerIn(min, max)));
}

/** `text` in upper case without `_`, `-` and spaces, so that `fork-join`, `ForkJoin` and `FORK_JOIN` compare equal. */
const looseName = (text: string): string => text.toUpperCase().replace(/[-_ ]/g, "");

/** Levenshtein distance of `a` and `b`, counting no further than `limit` (anything beyond is `limit + 1`). */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    if (Math.min(...current) > limit) return limit + 1;
    previous = current;
  }
  return Math.min(previous[b.length]!, limit + 1);
}

/**
 * The option `value` was most likely meant to be, for a "did you mean" hint: the one it is but for case and `_`, `-`
 * or spaces (`simple`, `fork-join`), else the only one nearest within two edits, and fewer than a third of its
 * characters (`HTTPP`, `WAIT_FOR_WEBHOK`); undefined when none is that near, or two are.
 */
export function likelyMeant(value: unknown, options: readonly string[]): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > 64) return undefined;
  const loose = looseName(value);
  const alike = options.find((option) => looseName(option) === loose);
  if (alike !== undefined) return alike;
  const limit = Math.min(2, Math.floor(loose.length / 3));
  let nearest: string | undefined;
  let nearestDistance = limit + 1;
  let tied = false;
  for (const option of options) {
    const distance = editDistance(loose, looseName(option), limit);
    if (distance < nearestDistance) [nearest, nearestDistance, tied] = [option, distance, false];
    else if (distance === nearestDistance) tied = true;
  }
  return nearestDistance <= limit && !tied ? nearest : undefined;
}

/**
 * A {@link rule} for one of `options`, whose message for a near miss (`simple`, `HTTPP`) ends with the option
 * meant: `; did you mean SIMPLE?`.
 */
export function oneOfRule<T extends string>(field: string, expected: string, options: readonly T[]): Rule<T> {
  const schema = v.custom<T>(
    (value) => (options as readonly unknown[]).includes(value),
    (issue) => {
      const meant = likelyMeant(issue.input, options);
      return `${field} must be ${expected}, but received ${describeValue(issue.input)}${meant === undefined ? "" : `; did you mean ${meant}?`}`;
    },
  );
  return expecting(schema, expected);
}

/**
 * An object schema whose missing required keys are reported as `<key> is required and must be
 * <expected>` at the key's own path. Unknown keys are accepted and left out of the output.
 * Callers check that the value is an object first (see {@link objectOf}).
 */
export function fieldsOf<const E extends v.ObjectEntries>(entries: E): v.ObjectSchema<E, (issue: v.ObjectIssue) => string> {
  return v.object(entries, (issue) => {
    const key = issue.path?.[0]?.key;
    // Valibot raises a missing key on the object schema itself; the key sits in the issue's path.
    if (typeof key === "string") {
      const entry: unknown = entries[key];
      const expected = typeof entry === "object" && entry !== null ? EXPECTATIONS.get(entry) : undefined;
      return expected === undefined ? `${key} is required` : `${key} is required and must be ${expected}`;
    }
    return `must be an object, but received ${describeValue(issue.input)}`;
  });
}

/** Like {@link fieldsOf}, but first requires a plain object, reported as `<field> must be an object...`. */
export function objectOf<const E extends v.ObjectEntries>(field: string, expected: string, entries: E) {
  const schema = v.pipe(
    v.custom<UnknownRecord>(isRecord, (issue) => `${field} must be ${expected}, but received ${describeValue(issue.input)}`),
    fieldsOf(entries),
  );
  return expecting(schema, expected);
}

/** A rule for the names of a {@link mapOf} object: the test, and the message for a name failing it. */
export interface KeyRule {
  test: (key: string) => boolean;
  message: (key: string) => string;
}

/**
 * An object of name → value (headers, taskToDomain). A bad value, or a name failing `options.key`, is
 * reported at its own key, e.g. `...headers.X-Trace`. With `wholeExpression`, the whole object may
 * instead be a `${...}` string.
 */
export function mapOf(
  field: string,
  valueExpected: string,
  test: (value: unknown) => boolean,
  options: { wholeExpression?: boolean; key?: KeyRule } = {},
): Rule<unknown> {
  const allowExpression = options.wholeExpression === true;
  const expected = `an object whose values are each ${valueExpected}${allowExpression ? " (or an expression)" : ""}`;
  const schema = v.pipe(
    v.custom<unknown>(
      (value) => isRecord(value) || (allowExpression && isExpression(value)),
      (issue) => `${field} must be ${expected}, but received ${describeValue(issue.input)}`,
    ),
    v.rawCheck<unknown>(({ dataset, addIssue }) => {
      if (!dataset.typed || !isRecord(dataset.value)) return;
      const input = dataset.value;
      for (const [key, value] of Object.entries(input)) {
        const path: [v.ObjectPathItem] = [{ type: "object", origin: "value", input, key, value }];
        // One issue per entry: a bad name is reported before a bad value.
        if (options.key && !options.key.test(key)) addIssue({ message: options.key.message(key), path });
        else if (!test(value)) addIssue({ message: `${field} value for ${JSON.stringify(key)} must be ${valueExpected}, but received ${describeValue(value)}`, path });
      }
    }),
  );
  return expecting(schema, expected);
}

/**
 * Names of headers a request sends or a callback must carry: one HTTP would refuse fails the definition
 * instead of every run (fetch throws, a `Headers` lookup throws).
 */
export const HEADER_NAME_KEY: KeyRule = {
  test: isHeaderName,
  message: (name) => `header name ${JSON.stringify(name)} must be ${TOKEN_DESCRIPTION}`,
};

/**
 * The message of a valibot issue as a caller reads it. A required field left out gets valibot's default for a missing
 * key, `Invalid key: Expected "action" but received undefined`, which reads as if the key were wrong: it is "is
 * required" instead (the issue's path names the field). Every other message is kept as it is.
 */
export function issueMessage(issue: v.BaseIssue<unknown>): string {
  const last = issue.path?.[issue.path.length - 1];
  const missingKey = issue.kind === "schema" && last?.origin === "key" && issue.received === "undefined" && issue.message.startsWith("Invalid key: ");
  return missingKey ? "is required" : issue.message;
}

/** Converts valibot issues into ours, turning each valibot path into a path string under `base`. */
export function toIssues(issues: readonly v.BaseIssue<unknown>[], base: string): ValidationIssue[] {
  return issues.map((issue) => {
    let path = base;
    for (const item of issue.path ?? []) {
      const key: unknown = item.key;
      path = typeof key === "number" ? childPath(path, key) : childPath(path, String(key));
    }
    return { path, message: issueMessage(issue) };
  });
}

/** Every problem `schema` finds in `value`, at paths under `path`. */
export function validateWith(schema: v.GenericSchema, value: unknown, path: string): ValidationIssue[] {
  const result = v.safeParse(schema, value);
  return result.success ? [] : toIssues(result.issues, path);
}

/**
 * The issue of a value (at `path`) whose expressions use secrets, worded by `message` for the names they use; none
 * when it uses none. A malformed or too-deep value gives none either: the common checks report it, and walking a
 * too-deep one would overflow the stack.
 */
export function secretUseIssues(value: unknown, path: string, message: (names: string[]) => string): ValidationIssue[] {
  if (!isJsonValue(value) || exceedsJsonDepth(value)) return [];
  const names = referencedSecrets(value);
  return names.length === 0 ? [] : [{ path, message: message(names) }];
}

/** Where a task's input comes from, as received, with their paths: its inputParameters and its inline task definition's inputTemplate. */
export function taskInputSources(task: UnknownRecord, path: string): Array<[unknown, string]> {
  const taskDefinition = task["taskDefinition"];
  return [
    [task["inputParameters"], childPath(path, "inputParameters")],
    [isRecord(taskDefinition) ? taskDefinition["inputTemplate"] : undefined, childPath(childPath(path, "taskDefinition"), "inputTemplate")],
  ];
}

/**
 * Problems with a task's `evaluatorType` and `expression` (a SWITCH's own fields, an INLINE's inputParameters): the type
 * must be one of `allowed` and the expression a non-empty string, described by `expects` for value-param and for a script.
 */
export function evaluatorFieldIssues(fields: UnknownRecord, path: string, allowed: readonly string[], expects: { valueParam: string; script: string }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const evaluatorType = fields["evaluatorType"];
  if (typeof evaluatorType !== "string" || !allowed.includes(evaluatorType)) {
    // Conductor's GraalVM Python evaluator has no counterpart in a Worker: said plainly, not as an unknown type.
    const why = evaluatorType === "python" ? " (the python evaluator is not supported here: write the script in JavaScript)" : "";
    issues.push({ path: childPath(path, "evaluatorType"), message: `evaluatorType must be one of ${allowed.join(", ")}, but received ${describeValue(evaluatorType)}${why}` });
  }
  const expression = fields["expression"];
  if (!isNonEmptyString(expression)) {
    const what = evaluatorType === "value-param" ? expects.valueParam : expects.script;
    issues.push({ path: childPath(path, "expression"), message: `expression must be ${what}, but received ${describeValue(expression)}` });
  }
  return issues;
}

/** Where a definition names a registered schema (Orkes' SchemaDef, of which only the reference is kept): `{name, version?}`. */
export function schemaReference(field: string) {
  return objectOf(field, "a reference to a registered schema: {name, version?}", {
    name: rule<string>("name", "a non-empty string (a schema registered with /api/schema)", isNonEmptyString),
    // Conductor reads a version below 1 as the latest, and SchemaDef's version is 0 unless set: the Java client sends 0.
    version: v.optional(
      v.pipe(
        integerRule("version", `an integer up to ${MAX_JAVA_INT} (0 or less, or none, for the latest)`, -MAX_JAVA_INT - 1, MAX_JAVA_INT),
        v.transform((version) => (version < 1 ? undefined : version)),
      ),
    ),
    type: v.optional(rule<"JSON">("type", "JSON (the only schema type this service checks)", (value) => value === "JSON")),
  });
}
