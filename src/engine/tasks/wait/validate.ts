/**
 * Registration-time checks of a WAIT task's inputs: a literal `duration` or `until` must be one the task can read,
 * and only one of them may be given. One from a `${...}` expression is checked when the task starts.
 */
import * as v from "valibot";
import { isRecord, orExpression, rule, validateWith, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { DURATION_FORMAT, isWaitInputGiven, parseWaitDuration, parseWaitUntil, UNTIL_FORMAT } from "./schedule";

const isDuration = (value: unknown): boolean => typeof value === "string" && parseWaitDuration(value) !== undefined;
const isUntil = (value: unknown): boolean => typeof value === "string" && parseWaitUntil(value) !== undefined;

const INPUT = v.object({
  duration: v.nullish(rule<string>("duration", `a duration (${DURATION_FORMAT}) or an expression`, orExpression(isDuration))),
  until: v.nullish(rule<string>("until", `a date-time in the format ${UNTIL_FORMAT}, or an expression`, orExpression(isUntil))),
});

/**
 * Problems in a WAIT task's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateWaitTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  const inputPath = childPath(path, "inputParameters");
  const both = isWaitInputGiven(input["duration"]) && isWaitInputGiven(input["until"]) ? [{ path: inputPath, message: "a WAIT task takes only one of duration and until, not both" }] : [];
  // A blank one is not given (see isWaitInputGiven): only those given are read.
  const givenOnly = Object.fromEntries(["duration", "until"].filter((key) => isWaitInputGiven(input[key])).map((key) => [key, input[key]]));
  return [...both, ...validateWith(INPUT, givenOnly, inputPath)];
}
