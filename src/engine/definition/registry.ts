/**
 * Per-task-type checks run on registration. Keyed by every {@link TaskType}, so adding a type to
 * the model fails to compile until its validator is listed here.
 */
import type { TaskType } from "../model";
import { validateConditionalForkTask } from "../tasks/conditional-fork/validate";
import { validateDoWhileTask } from "../tasks/do-while/validate";
import { validateDynamicTask } from "../tasks/dynamic/validate";
import { validateEventTask } from "../tasks/event/validate";
import { validateExclusiveJoinTask } from "../tasks/exclusive-join/validate";
import { validateForkJoinTask, validateJoinTask } from "../tasks/fork-join/validate";
import { validateForkJoinDynamicTask } from "../tasks/fork-join-dynamic/validate";
import { validateGetSignedJwtTask } from "../tasks/get-signed-jwt/validate";
import { validateHttpTask } from "../tasks/http/validate";
import { validateHttpPollTask } from "../tasks/http-poll/validate";
import { validateHumanTask } from "../tasks/human/validate";
import { validateInlineTask } from "../tasks/inline/validate";
import { validateJsonJqTransformTask } from "../tasks/json-jq-transform/validate";
import { validateLambdaTask } from "../tasks/lambda/validate";
import { validatePullWorkflowMessagesTask } from "../tasks/pull-workflow-messages/validate";
import { validateSetVariableTask } from "../tasks/set-variable/validate";
import { validateStartWorkflowTask } from "../tasks/start-workflow/validate";
import { validateSubWorkflowTask } from "../tasks/sub-workflow/validate";
import { validateDecisionTask, validateSwitchTask } from "../tasks/switch/validate";
import { validateTerminateTask } from "../tasks/terminate/validate";
import { validateTerminateWorkflowTask } from "../tasks/terminate-workflow/validate";
import { validateUpdateSecretTask } from "../tasks/update-secret/validate";
import { validateUpdateTaskTask } from "../tasks/update-task/validate";
import { validateWaitTask } from "../tasks/wait/validate";
import { validateWaitForWebhookTask } from "../tasks/wait-for-webhook/validate";
import type { ValidationIssue } from "../validation-issue";
import type { UnknownRecord } from "./checks";

/**
 * Checks one task of a known type as received (common fields may still be invalid) and returns
 * every problem, with paths under `path` (the task's own path, e.g. `tasks[0]`).
 */
export type TaskValidator = (task: UnknownRecord, path: string) => ValidationIssue[];

/** The validator for each task type. */
export const TASK_VALIDATORS: Readonly<Record<TaskType, TaskValidator>> = {
  HTTP: validateHttpTask,
  // The HTTP task under another name (see `isHttpType`): the same request, the same checks.
  HTTP_SYNC: validateHttpTask,
  SUB_WORKFLOW: validateSubWorkflowTask,
  WAIT_FOR_WEBHOOK: validateWaitForWebhookTask,
  // A worker's task: its input is whatever the worker reads, and it has no settings of its own to check.
  SIMPLE: () => [],
  SWITCH: validateSwitchTask,
  WAIT: validateWaitTask,
  SET_VARIABLE: validateSetVariableTask,
  // Its correlationId is checked as it runs (an expression gives it, most often).
  SET_CORRELATION_ID: () => [],
  TERMINATE: validateTerminateTask,
  FORK_JOIN: validateForkJoinTask,
  JOIN: validateJoinTask,
  EXCLUSIVE_JOIN: validateExclusiveJoinTask,
  INLINE: validateInlineTask,
  DO_WHILE: validateDoWhileTask,
  // The same loop as a DO_WHILE, its condition asked before the first iteration too: the same fields, the same checks.
  WHILE: validateDoWhileTask,
  JSON_JQ_TRANSFORM: validateJsonJqTransformTask,
  HUMAN: validateHumanTask,
  DECISION: validateDecisionTask,
  FORK_JOIN_DYNAMIC: validateForkJoinDynamicTask,
  DYNAMIC: validateDynamicTask,
  START_WORKFLOW: validateStartWorkflowTask,
  // Does nothing: nothing of its own to check.
  NOOP: () => [],
  // Waits to be resumed from outside: nothing of its own to check.
  YIELD: () => [],
  EVENT: validateEventTask,
  HTTP_POLL: validateHttpPollTask,
  LAMBDA: validateLambdaTask,
  UPDATE_TASK: validateUpdateTaskTask,
  TERMINATE_WORKFLOW: validateTerminateWorkflowTask,
  GET_SIGNED_JWT: validateGetSignedJwtTask,
  UPDATE_SECRET: validateUpdateSecretTask,
  PULL_WORKFLOW_MESSAGES: validatePullWorkflowMessagesTask,
  CONDITIONAL_FORK: validateConditionalForkTask,
};
