import type { UnknownRecord } from "../../definition/checks";
import { hasExpression } from "../../expressions";
import { holdsLoneSurrogate, LONE_SURROGATE_RULE } from "../../http-syntax";
import { childPath, registrationOnly, type ValidationIssue } from "../../validation-issue";
import { eventName, sinkProblem } from ".";

/**
 * An EVENT task's `sink` (a task-level field, as Conductor's): `conductor` or `conductor:<queue>`, or a `${...}`
 * resolved when the task runs (and checked then). Other sinks (`sqs:`, `kafka:`, …) are refused here rather than
 * failing every run. A sink holding a lone surrogate is refused at registration (a lint): it publishes an event no
 * handler can be registered for, as a handler's event may not hold one (its path, `GET /api/event/{event}`, cannot).
 */
export function validateEventTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const sink = task["sink"];
  if (typeof sink === "string" && hasExpression(sink)) return [];
  if ("invalid" in eventName(sink, "", "")) return [{ path: childPath(path, "sink"), message: sinkProblem(sink) }];
  if (typeof sink === "string" && holdsLoneSurrogate(sink)) {
    return [registrationOnly({ path: childPath(path, "sink"), message: `sink ${LONE_SURROGATE_RULE}: the event it publishes is one no event handler may name, as a handler's event is listed by its path (GET /api/event/{event}), which cannot carry it` })];
  }
  return [];
}
