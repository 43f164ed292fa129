/**
 * Orkes' workflow rate limit (`rateLimitConfig`): at most `concurrentExecLimit` executions sharing one key run at
 * once. An execution subject to one starts (and is reopened) waiting, `rateLimited`, with nothing scheduled; the
 * actor asks the key's limit for a place and the execution moves on once admitted. This module decides the key and
 * what waiting means for the execution; the places are counted by the actor (`workflow-limit.ts`).
 */
import type { DecideEnv } from "./config";
import { evaluationContext, maskedSecrets } from "./evaluation";
import { hasExpression, resolveValue } from "./expressions";
import { jsonWithin } from "./json-bytes";
import { TERMINAL_WORKFLOW_STATUSES, type JsonValue, type WorkflowDef, type WorkflowExecution } from "./model";

/**
 * The fields that make `state` (just started or reopened) wait for a place under its definition's rate limit, or none
 * when it has no limit. A test run never waits: its runs are its own, and must not take production's places.
 */
export function admissionFields(state: WorkflowExecution, env: DecideEnv): Pick<WorkflowExecution, "rateLimited" | "rateLimitKey"> {
  const config = state.definition.rateLimitConfig;
  if (config === undefined || state.test !== undefined) return { rateLimited: undefined, rateLimitKey: undefined };
  return { rateLimited: true, rateLimitKey: rateLimitKeyOf(state, config.rateLimitKey, env) };
}

/**
 * The key `declared` gives for `state`: the text itself, or what its `${...}` resolve to against the execution (a
 * string as it is, another value as JSON); the workflow's name when none is declared or it resolves to nothing
 * (null, an empty string, or an expression that cannot be resolved).
 */
export function rateLimitKeyOf(state: WorkflowExecution, declared: string | undefined, env: DecideEnv): string {
  if (declared === undefined) return state.workflowName;
  if (!hasExpression(declared)) return declared;
  let resolved: JsonValue | undefined;
  try {
    resolved = resolveValue(declared, evaluationContext(state, env.now, undefined, maskedSecrets, env.config.maxPayloadBytes));
  } catch {
    return state.workflowName;
  }
  if (resolved === null || resolved === undefined) return state.workflowName;
  // A whole value over the payload bound counts as one that cannot be resolved, as text past it does.
  const key = typeof resolved === "string" ? resolved.trim() : jsonWithin(resolved, env.config.maxPayloadBytes);
  return key === undefined || key === "" ? state.workflowName : key;
}

/** An entry under a rate limit an execution owes (the limit object's `enter` arguments). */
export interface LimitEntry {
  key: string;
  limit: number;
  /** When the definition that set `limit` was registered (0 for one given inline): the newest one's limit is kept. */
  definedAt: number;
  /**
   * The workflow whose execution enters, which the limit records so that a later change of that workflow's limit reaches
   * it (see `ExecutionLimit.resize`). Absent from entries stored before it was kept.
   */
  workflowName?: string;
}

/**
 * What `next` (decided on `previous`, null for a new execution) owes its rate limits: the key whose place it gives up
 * because it ended, and the entry it asks for because it started or reopened waiting (`rateLimited`). Either may be
 * absent; an entry not made yet when the execution ends is dropped with the ending (the leave follows either way).
 */
export function limitChanges(previous: WorkflowExecution | null, next: WorkflowExecution): { leave?: string; enter?: LimitEntry } {
  const wasActive = previous !== null && !TERMINAL_WORKFLOW_STATUSES.has(previous.status);
  const isActive = !TERMINAL_WORKFLOW_STATUSES.has(next.status);
  const changes: { leave?: string; enter?: LimitEntry } = {};
  if (wasActive && !isActive && previous.rateLimitKey !== undefined) changes.leave = previous.rateLimitKey;
  const limit = next.definition.rateLimitConfig?.concurrentExecLimit;
  if (!wasActive && isActive && next.rateLimited === true && next.rateLimitKey !== undefined && limit !== undefined) {
    changes.enter = { key: next.rateLimitKey, limit, definedAt: next.definition.updateTime ?? next.definition.createTime ?? 0, workflowName: next.workflowName };
  }
  return changes;
}

/**
 * The limit each workflow of a registration has now (null: none), by name: that of the highest version of it registered
 * (a batch may register several), which the keys its executions used are told (see `limit-changes.ts`).
 */
export function registeredLimits(definitions: readonly WorkflowDef[]): Map<string, number | null> {
  const latest = new Map<string, WorkflowDef>();
  for (const definition of definitions) {
    const seen = latest.get(definition.name);
    if (seen === undefined || definition.version >= seen.version) latest.set(definition.name, definition);
  }
  return new Map([...latest].map(([name, definition]) => [name, definition.rateLimitConfig?.concurrentExecLimit ?? null]));
}
