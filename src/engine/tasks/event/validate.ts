import type { UnknownRecord } from "../../definition/checks";
import { hasExpression } from "../../expressions";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { eventName, sinkProblem } from ".";

/**
 * An EVENT task's `sink` (a task-level field, as Conductor's): `conductor` or `conductor:<queue>`, or a `${...}`
 * resolved when the task runs (and checked then). Other sinks (`sqs:`, `kafka:`, …) are refused here rather than
 * failing every run.
 */
export function validateEventTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const sink = task["sink"];
  if (typeof sink === "string" && hasExpression(sink)) return [];
  return "invalid" in eventName(sink, "", "") ? [{ path: childPath(path, "sink"), message: sinkProblem(sink) }] : [];
}
