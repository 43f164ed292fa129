/**
 * Registration-time checks of a WAIT_FOR_WEBHOOK task's inputs (spec 2.4).
 */
import * as v from "valibot";
import {
  describeValue,
  HEADER_NAME_KEY,
  isExpression,
  isIntegerIn,
  isNonEmptyString,
  isOneOf,
  isRecord,
  isString,
  mapOf,
  objectOf,
  orExpression,
  rule,
  validateWith,
  type UnknownRecord,
} from "../../definition/checks";
import { isHeaderName, TOKEN_DESCRIPTION } from "../../http-syntax";
import { referencedSecrets } from "../../expressions";
import { MAX_MATCHES, matchesSecretsMessage, parseMatchesKey } from "./matches";
import { childPath, type ValidationIssue } from "../../validation-issue";

/** Signature algorithms a callback may be verified with. */
export const WEBHOOK_SIGNATURE_ALGORITHMS = ["HMAC-SHA256"] as const;

/** How the signed content and the header are laid out: `plain` (prefix + HMAC of the body, GitHub style) or `stripe` (`t=…,v1=…` over `t.body`). */
export const WEBHOOK_SIGNATURE_SCHEMES = ["plain", "stripe"] as const;

/** Encodings of the signature in the callback header. */
export const WEBHOOK_SIGNATURE_ENCODINGS = ["hex", "base64"] as const;

const SIGNATURE = objectOf("signature", "an object with at least secret and header", {
  // Non-empty: an empty HMAC key would let anyone forge a valid signature.
  secret: rule<string>("secret", "a non-empty string (typically ${workflow.secrets.<name>})", isNonEmptyString),
  header: rule<string>("header", `a non-empty string naming the callback header that carries the signature, ${TOKEN_DESCRIPTION}`, orExpression(isHeaderName)),
  algorithm: v.optional(
    rule<string>("algorithm", `${WEBHOOK_SIGNATURE_ALGORITHMS.join(", ")} (the default)`, orExpression(isOneOf(WEBHOOK_SIGNATURE_ALGORITHMS))),
  ),
  encoding: v.optional(
    rule<string>("encoding", `one of ${WEBHOOK_SIGNATURE_ENCODINGS.join(", ")} (hex by default)`, orExpression(isOneOf(WEBHOOK_SIGNATURE_ENCODINGS))),
  ),
  prefix: v.optional(rule<string>("prefix", "a string (text before the signature in the header, e.g. sha256=)", isString)),
  scheme: v.optional(rule<string>("scheme", `one of ${WEBHOOK_SIGNATURE_SCHEMES.join(", ")} (plain by default)`, isOneOf(WEBHOOK_SIGNATURE_SCHEMES))),
  toleranceSeconds: v.optional(rule<number>("toleranceSeconds", "a whole number of seconds from 1 to 86400 (stripe scheme: how old a signed timestamp may be; 300 by default)", isIntegerIn(1, 86_400))),
});

const INPUT = v.object({
  timeoutSeconds: v.optional(
    rule<unknown>(
      "timeoutSeconds",
      "a whole number of seconds of at least 0 (0 waits forever), or an expression",
      orExpression(isIntegerIn(0, Number.MAX_SAFE_INTEGER)),
    ),
  ),
  headers: v.optional(mapOf("headers", "a string (the value the callback must carry)", isString, { key: HEADER_NAME_KEY })),
  workflowId: v.optional(rule<string>("workflowId", "a string", isString)),
  taskId: v.optional(rule<string>("taskId", "a string", isString)),
  signature: v.optional(SIGNATURE),
});

/**
 * Problems in a WAIT_FOR_WEBHOOK task's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateWaitForWebhookTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  const inputPath = childPath(path, "inputParameters");
  return [...matchesIssues(input, inputPath), ...validateWith(INPUT, input, inputPath)];
}

/**
 * Problems with the task's webhook matches (see `matches.ts`): under `matches` (an object, or an expression giving one)
 * or as `$…` keys of the input, each a JSONPath this service can follow with a text, number or boolean (or an
 * expression) to find there.
 */
function matchesIssues(input: UnknownRecord, inputPath: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const nested = input["matches"];
  const nestedPath = childPath(inputPath, "matches");
  const entries: Array<[key: string, value: unknown, path: string]> = [];
  if (isRecord(nested)) for (const [key, value] of Object.entries(nested)) entries.push([key, value, childPath(nestedPath, key)]);
  else if (isExpression(nested)) secretIssue(nested, nestedPath, issues);
  else if (nested !== undefined) {
    issues.push({ path: nestedPath, message: `matches must be an object of JSONPath keys and the values to find there, but is ${describeValue(nested)}` });
  }
  for (const key of Object.keys(input).filter((name) => name.startsWith("$"))) entries.push([key, input[key], childPath(inputPath, key)]);
  if (entries.length > MAX_MATCHES) issues.push({ path: nestedPath, message: `a WAIT_FOR_WEBHOOK may match on at most ${MAX_MATCHES} paths, but has ${entries.length}` });
  for (const [key, value, at] of entries) {
    const parsed = parseMatchesKey(key);
    if (parsed instanceof Error) issues.push({ path: at, message: `the key ${parsed.message}` });
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      issues.push({ path: at, message: `must be the text, number or boolean the event must hold at ${key.slice(0, 60)} (or an expression giving one), but is ${describeValue(value)}` });
    } else if (typeof value === "string") secretIssue(value, at, issues);
  }
  return issues;
}

function secretIssue(value: string, path: string, issues: ValidationIssue[]): void {
  const secrets = referencedSecrets(value);
  if (secrets.length > 0) issues.push({ path, message: matchesSecretsMessage(secrets) });
}
