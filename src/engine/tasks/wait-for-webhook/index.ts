import { isRecord } from "../../definition/checks";
import type { JsonObject, JsonValue, WorkflowExecution } from "../../model";
import { matchesSecrets, matchesSecretsMessage, waitingMatch, writtenMatches } from "./matches";
import type { TaskTypeModule } from "../task-type";
import { webhookConfigProblem } from "./callback";

/** The error code of a webhook task that waited in vain (spec section 7). */
export const WEBHOOK_TIMEOUT = "WEBHOOK_TIMEOUT";

/**
 * The seconds a webhook task waits (0: forever), or undefined when its resolved `timeoutSeconds` is none: a whole
 * number of at least 0, or its digits as text; absent or null is the spec's default, 0. Registration refuses any
 * other literal; one from an expression is only known now.
 */
function timeoutSecondsOf(input: JsonObject): number | undefined {
  const raw: JsonValue | undefined = input["timeoutSeconds"];
  if (raw === undefined || raw === null) return 0;
  const value = typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The seconds of a started webhook task, whose `timeoutSeconds` was checked as it started. */
function timeoutSeconds(input: JsonObject): number {
  return timeoutSecondsOf(input) ?? 0;
}

/**
 * Why a resolved `timeoutSeconds` cannot be waited for, or undefined. Such a value once meant "no timeout": a task
 * meant to give up waited forever, its workflow with it, as WAIT fails a duration it cannot read.
 */
function timeoutProblem(input: JsonObject): string | undefined {
  if (timeoutSecondsOf(input) !== undefined) return undefined;
  const shown = JSON.stringify(input["timeoutSeconds"]).slice(0, 60);
  return `WAIT_FOR_WEBHOOK timeoutSeconds resolved to ${shown}, not a whole number of seconds of at least 0 (0 waits forever)`;
}

/** The path of a webhook task's callback; with the base URL in front, its callback URL. */
export function callbackPath(workflowId: string, taskRefName: string, taskId: string): string {
  return `/api/tasks/webhook/${workflowId}/${encodeURIComponent(taskRefName)}/${taskId}`;
}

/** Why no event sent to a webhook could match the task (see `matches.ts`), or undefined: it has no matches, or good ones. */
function matchesProblem(input: JsonObject, taskRefName: string, execution: WorkflowExecution): string | undefined {
  const matches = writtenMatches(input);
  if (matches === undefined) return undefined;
  const nested = input["matches"];
  if (nested !== undefined && !isRecord(nested)) return `matches resolved to ${JSON.stringify(nested).slice(0, 60)}, not an object`;
  const match = waitingMatch(execution.workflowName, execution.workflowVersion, taskRefName, matches);
  return match instanceof Error ? match.message : undefined;
}

/**
 * WAIT_FOR_WEBHOOK: waits, without any side effect of its own, until its callback URL is called
 * (see the actor's callback handling), an event sent to a webhook matches it (with `matches`: see `matches.ts`), or
 * `timeoutSeconds` pass.
 */
export const waitForWebhookTask: TaskTypeModule = {
  type: "WAIT_FOR_WEBHOOK",
  start(task, definition, execution, env) {
    // Registration refuses a secret in the task's own matches; one its task definition's inputTemplate adds is caught here.
    const secrets = matchesSecrets({ ...(definition.taskDefinition?.inputTemplate ?? {}), ...(definition.inputParameters ?? {}) });
    const problem =
      (secrets.length > 0 ? matchesSecretsMessage(secrets) : undefined) ??
      webhookConfigProblem(task.inputData) ??
      matchesProblem(task.inputData, definition.taskReferenceName, execution);
    if (problem !== undefined) {
      // No callback could ever be verified: fail now rather than wait for one that would answer 401.
      const reason = `WAIT_FOR_WEBHOOK input cannot be checked: ${problem}`;
      return { task: { ...task, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: reason, startTime: env.now, endTime: env.now, updateTime: env.now }, dispatch: false };
    }
    const badTimeout = timeoutProblem(task.inputData);
    if (badTimeout !== undefined) {
      return { task: { ...task, status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: badTimeout, startTime: env.now, endTime: env.now, updateTime: env.now }, dispatch: false };
    }
    const seconds = timeoutSeconds(task.inputData);
    // The spec's defaults, shown in the task's input so the callback URL can be read off it.
    const inputData: JsonObject = { workflowId: execution.workflowId, taskId: task.taskId, timeoutSeconds: seconds, ...task.inputData };
    const started = {
      ...task,
      inputData,
      status: "IN_PROGRESS" as const,
      awaitingExternal: true,
      startTime: env.now,
      updateTime: env.now,
      callbackUrl: `${execution.baseUrl ?? ""}${callbackPath(execution.workflowId, task.referenceTaskName, task.taskId)}`,
    };
    return { task: seconds > 0 ? { ...started, timeoutAt: env.now + seconds * 1000 } : started, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
  onTimeout(task, env) {
    const seconds = timeoutSeconds(task.inputData);
    const message = `No callback arrived within ${seconds} seconds`;
    return {
      status: "FAILED",
      outputData: {
        status: "FAILED",
        error: WEBHOOK_TIMEOUT,
        message,
        details: { timeoutSeconds: seconds, startTime: new Date(task.startTime).toISOString(), endTime: new Date(env.now).toISOString() },
      },
      reasonForIncompletion: message,
      endTime: env.now,
      updateTime: env.now,
      awaitingExternal: false,
      timeoutAt: undefined,
    };
  },
};
