/**
 * Validation of Orkes' workflow rate limit (`rateLimitConfig`, see `RateLimitConfig`): in a definition, and on its own
 * (`PUT /api/metadata/workflow/{name}/rate-limit`).
 */
import * as v from "valibot";
import { findTemplateErrors, hasExpression, referencedSecrets } from "../expressions";
import type { RateLimitConfig } from "../model";
import { childPath, type ValidationIssue } from "../validation-issue";
import { integerRule, isJacksonNullText, isRecord, objectOf, rule, toIssues } from "./checks";

/** Longest `rateLimitKey`, as written (a template may resolve to a longer key). */
export const MAX_RATE_LIMIT_KEY_LENGTH = 255;

/** Highest `concurrentExecLimit`: a limit's waiting and running executions are one object's to keep. */
export const MAX_CONCURRENT_EXEC_LIMIT = 10_000;

/** The fields of a rate limit as received; null is what clients send for "none". */
type ReceivedRateLimit = { rateLimitKey?: string | null; concurrentExecLimit?: number | null };

/** The shape of a `rateLimitConfig` (its key's `${...}` are checked by {@link rateLimitKeyIssues}). */
export const RATE_LIMIT_CONFIG = objectOf("rateLimitConfig", "Orkes' workflow rate limit: {rateLimitKey?, concurrentExecLimit}", {
  rateLimitKey: v.nullish(
    rule<string>(
      "rateLimitKey",
      `a string of at most ${MAX_RATE_LIMIT_KEY_LENGTH} characters, text or a \${...} template such as \${workflow.correlationId}`,
      (value) => typeof value === "string" && value.length <= MAX_RATE_LIMIT_KEY_LENGTH,
    ),
  ),
  // Conductor's RateLimitConfig holds an int: Jackson reads "" and "null" there as 0, no limit.
  concurrentExecLimit: v.nullish(
    v.pipe(
      v.unknown(),
      v.transform((limit) => (isJacksonNullText(limit) ? 0 : limit)),
      integerRule(
        "concurrentExecLimit",
        `an integer from 0 (no limit) to ${MAX_CONCURRENT_EXEC_LIMIT}: how many executions of one key may run at once`,
        0,
        MAX_CONCURRENT_EXEC_LIMIT,
      ),
    ),
  ),
});

/** The rate limit kept from a valid `rateLimitConfig`: none without a limit of at least 1, no key when it is blank. */
export function rateLimitConfigOf(config: ReceivedRateLimit | null | undefined): RateLimitConfig | undefined {
  const limit = config?.concurrentExecLimit ?? 0;
  if (config == null || limit === 0) return undefined;
  const key = config.rateLimitKey?.trim();
  return key === undefined || key === "" ? { concurrentExecLimit: limit } : { rateLimitKey: key, concurrentExecLimit: limit };
}

/**
 * Problems with the `${...}` of the key of rate limit `config` (at `path`): resolved at every start, it must parse and
 * must not use secrets (the key it gives is shown).
 */
export function rateLimitKeyIssues(config: unknown, path: string): ValidationIssue[] {
  const key = isRecord(config) ? config["rateLimitKey"] : undefined;
  if (typeof key !== "string" || !hasExpression(key)) return [];
  const at = childPath(path, "rateLimitKey");
  const issues = findTemplateErrors(key, at);
  const secrets = issues.length === 0 ? referencedSecrets(key) : [];
  if (secrets.length > 0) issues.push({ path: at, message: `rateLimitKey must not use secrets (${secrets.join(", ")}): the key it gives is stored and shown` });
  return issues;
}

/**
 * A rate limit given on its own: every problem (at paths from the body's root), or what to keep (undefined: no limit,
 * which a limit of 0 means). `concurrentExecutionLimit`, the Python client's name for the limit, is taken too.
 */
export function validateRateLimitConfig(input: unknown): { ok: true; value: RateLimitConfig | undefined } | { ok: false; errors: ValidationIssue[] } {
  const received = isRecord(input) && input["concurrentExecLimit"] === undefined && input["concurrentExecutionLimit"] !== undefined
    ? { ...input, concurrentExecLimit: input["concurrentExecutionLimit"] }
    : input;
  const parsed = v.safeParse(RATE_LIMIT_CONFIG, received);
  const issues = [...(parsed.success ? [] : toIssues(parsed.issues, "")), ...rateLimitKeyIssues(received, "")];
  if (!parsed.success || issues.length > 0) return { ok: false, errors: issues.map((issue) => (issue.path === "" ? { ...issue, path: "(body)" } : issue)) };
  return { ok: true, value: rateLimitConfigOf(parsed.output) };
}
