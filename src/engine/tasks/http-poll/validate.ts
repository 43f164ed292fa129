import { hasExpression } from "../../expressions";
import { describeValue, isRecord, type UnknownRecord } from "../../definition/checks";
import type { JsonValue } from "../../model";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { validateHttpTask } from "../http/validate";
import { POLLING_STRATEGIES, wholeNumber } from "./index";

/**
 * An HTTP_POLL task: its request as an HTTP task's (see `validateHttpTask`), and its poll settings, each where it is
 * written (in `http_request` or flat): `terminationCondition` a script (its syntax is checked with the definition's
 * other scripts), `pollingInterval` a whole number of seconds of at least 1, `pollingStrategy` one of the strategies,
 * `maxPollCount` a whole number. A `${...}` value is checked once resolved (an unusable one takes the default).
 */
export function validateHttpPollTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const issues = validateHttpTask(task, path);
  const input = task["inputParameters"];
  if (!isRecord(input)) return issues;
  const nested = isRecord(input["http_request"]) ? input["http_request"] : undefined;
  const inputPath = childPath(path, "inputParameters");
  const setting = (name: string): { value: unknown; path: string } | undefined => {
    if (nested !== undefined && Object.hasOwn(nested, name)) return { value: nested[name], path: childPath(childPath(inputPath, "http_request"), name) };
    return Object.hasOwn(input, name) ? { value: input[name], path: childPath(inputPath, name) } : undefined;
  };
  const check = (name: string, valid: (value: unknown) => boolean, expected: string) => {
    const given = setting(name);
    if (given === undefined || given.value === null || (typeof given.value === "string" && hasExpression(given.value)) || valid(given.value)) return;
    issues.push({ path: given.path, message: `${name} must be ${expected}, but received ${describeValue(given.value)}` });
  };
  check("terminationCondition", (value) => typeof value === "string", "JavaScript (a string) that holds once polling may stop, such as $.output.response.body.status === 'DONE'");
  check("pollingInterval", (value) => wholeNumber(value as JsonValue, 1) !== undefined, "a whole number of seconds of at least 1 (a number, or its digits as text)");
  check("pollingStrategy", (value) => POLLING_STRATEGIES.some((strategy) => strategy === value), `one of ${POLLING_STRATEGIES.join(", ")}`);
  check("maxPollCount", (value) => wholeNumber(value as JsonValue, 0) !== undefined, "a whole number of polls (0: no limit)");
  return issues;
}
