import type { JsonObject, JsonValue, TaskType, WorkflowTaskDef } from "../model";
import { setOwn } from "../own-property";
import { conditionalForkTask } from "./conditional-fork";
import { doWhileTask, whileTask } from "./do-while";
import { exclusiveJoinTask } from "./exclusive-join";
import { forkJoinTask, joinTask } from "./fork-join";
import { forkJoinDynamicTask } from "./fork-join-dynamic";
import { getSignedJwtTask } from "./get-signed-jwt";
import { httpSyncTask, httpTask } from "./http";
import { httpPollTask } from "./http-poll";
import { humanTask } from "./human";
import { inlineTask } from "./inline";
import { jsonJqTransformTask } from "./json-jq-transform";
import { lambdaTask } from "./lambda";
import { setVariableTask } from "./set-variable";
import { setCorrelationIdTask } from "./set-correlation-id";
import { noopTask } from "./noop";
import { pullWorkflowMessagesTask } from "./pull-workflow-messages";
import { simpleTask } from "./simple";
import { startWorkflowTask } from "./start-workflow";
import type { TaskTypeModule } from "./task-type";
import { subWorkflowTask } from "./sub-workflow";
import { decisionTask, switchTask } from "./switch";
import { terminateTask } from "./terminate";
import { terminateWorkflowTask } from "./terminate-workflow";
import { updateSecretTask } from "./update-secret";
import { updateTaskTask } from "./update-task";
import { waitTask } from "./wait";
import { waitForWebhookTask } from "./wait-for-webhook";
import { yieldTask } from "./yield";
import { eventTask } from "./event";

/** Task types the engine can run, by type name. */
const MODULES: Partial<Record<TaskType, TaskTypeModule>> = {
  HTTP: httpTask,
  HTTP_SYNC: httpSyncTask,
  SUB_WORKFLOW: subWorkflowTask,
  WAIT_FOR_WEBHOOK: waitForWebhookTask,
  SIMPLE: simpleTask,
  SWITCH: switchTask,
  WAIT: waitTask,
  SET_VARIABLE: setVariableTask,
  SET_CORRELATION_ID: setCorrelationIdTask,
  TERMINATE: terminateTask,
  FORK_JOIN: forkJoinTask,
  JOIN: joinTask,
  EXCLUSIVE_JOIN: exclusiveJoinTask,
  INLINE: inlineTask,
  DO_WHILE: doWhileTask,
  WHILE: whileTask,
  JSON_JQ_TRANSFORM: jsonJqTransformTask,
  HUMAN: humanTask,
  DECISION: decisionTask,
  FORK_JOIN_DYNAMIC: forkJoinDynamicTask,
  START_WORKFLOW: startWorkflowTask,
  NOOP: noopTask,
  YIELD: yieldTask,
  EVENT: eventTask,
  HTTP_POLL: httpPollTask,
  LAMBDA: lambdaTask,
  UPDATE_TASK: updateTaskTask,
  TERMINATE_WORKFLOW: terminateWorkflowTask,
  GET_SIGNED_JWT: getSignedJwtTask,
  UPDATE_SECRET: updateSecretTask,
  PULL_WORKFLOW_MESSAGES: pullWorkflowMessagesTask,
  CONDITIONAL_FORK: conditionalForkTask,
};

/**
 * The template a task's input is resolved from (its type may add task-level fields), under the defaults of
 * its task definition's `inputTemplate` (Conductor's: a key the task sets wins).
 */
export function taskInputTemplate(definition: WorkflowTaskDef): JsonObject {
  const own = MODULES[definition.type]?.inputTemplate?.(definition) ?? definition.inputParameters ?? {};
  const defaults = definition.taskDefinition?.inputTemplate;
  return defaults === undefined ? own : { ...defaults, ...own };
}

/**
 * A task's input: its template (see {@link taskInputTemplate}) resolved by `resolve`, then, as Conductor's
 * `getTaskInputV2` does, each key whose value resolved to null taking its task definition's `inputTemplate` default
 * instead (resolved too): `retries: "${workflow.input.retries}"` falls back to the definition's `retries: 3`.
 */
export function resolvedTaskInput(definition: WorkflowTaskDef, resolve: (template: JsonValue) => JsonValue): JsonValue {
  const resolved = resolve(taskInputTemplate(definition));
  const defaults = definition.taskDefinition?.inputTemplate;
  if (defaults === undefined || typeof resolved !== "object" || resolved === null || Array.isArray(resolved)) return resolved;
  const fallbacks = Object.keys(defaults).filter((key) => Object.hasOwn(resolved, key) && resolved[key] === null && defaults[key] !== null);
  if (fallbacks.length === 0) return resolved;
  const input: JsonObject = { ...resolved };
  for (const key of fallbacks) setOwn(input, key, resolve(defaults[key]!));
  return input;
}

/** The module running tasks of `type`, or undefined when this build cannot run it. */
export function taskModule(type: TaskType): TaskTypeModule | undefined {
  return MODULES[type];
}
