import type { JsonObject, JsonValue, TaskExecution, WorkflowExecution } from "../../model";
import { planOf } from "../../plan";
import type { TaskTypeModule } from "../task-type";

/**
 * Most messages a workflow's queue holds at once (Conductor's `conductor.workflow-message-queue.maxQueueSize`): a push
 * beyond it is refused (429) until a PULL_WORKFLOW_MESSAGES takes some.
 */
export const MAX_QUEUED_MESSAGES = 1000;

/** Largest batch one PULL_WORKFLOW_MESSAGES takes (Conductor's `maxBatchSize`): a larger `batchSize` is capped to it. */
export const MAX_BATCH_SIZE = 100;

/**
 * One message of a workflow's queue (Conductor's `WorkflowMessage`), as a PULL_WORKFLOW_MESSAGES task's output shows
 * it: its id (a random UUID, answered to the push), its workflow, the pushed JSON object, and when it was received.
 */
export interface WorkflowMessage {
  id: string;
  workflowId: string;
  payload: JsonObject;
  /** ISO-8601 UTC. */
  receivedAt: string;
}

/** How a waiting PULL_WORKFLOW_MESSAGES task takes messages: up to `batchSize`, and whether it waits for the first. */
export interface MessagePull {
  taskId: string;
  batchSize: number;
  /** False (input `blocking: false`): it completes at once, with the messages there are, none included. */
  blocking: boolean;
}

/**
 * A task's `batchSize` as Conductor's PullWorkflowMessages reads it: a whole number from 1 to {@link MAX_BATCH_SIZE},
 * a larger one capped, anything else (absent, below 1, not a number) 1. A number written as text counts too: an
 * expression often resolves to one.
 */
export function batchSizeOf(input: JsonObject): number {
  const raw: JsonValue | undefined = input["batchSize"];
  const value = typeof raw === "string" && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1) return 1;
  return Math.min(Math.floor(value), MAX_BATCH_SIZE);
}

/**
 * A task's `blocking`: true unless given false, as Conductor reads it, or the text "false" (what `${workflow.input.x}`
 * gives from a query string or a form; Conductor's would block on it), as `batchSize` written as text counts too.
 */
export function isBlocking(input: JsonObject): boolean {
  const raw = input["blocking"];
  return !(raw === false || (typeof raw === "string" && raw.trim().toLowerCase() === "false"));
}

/** A PULL_WORKFLOW_MESSAGES task's output: its batch, and how many it holds (Conductor's `messages` and `count`). */
export function pulledOutput(messages: readonly WorkflowMessage[]): JsonObject {
  return { messages: messages.map((message) => ({ ...message })), count: messages.length };
}

/**
 * The PULL_WORKFLOW_MESSAGES tasks of `execution` that wait for messages now, oldest first: only while it runs (a
 * paused workflow's wait until it is resumed, as Conductor's system task worker leaves a paused workflow's tasks be).
 * Cheap for the definitions that have none: the actor asks after every change.
 */
export function messagePulls(execution: WorkflowExecution): MessagePull[] {
  if (execution.status !== "RUNNING" || !planOf(execution.definition).pullsMessages) return [];
  return execution.tasks.filter(waitsForMessages).map((task) => ({ taskId: task.taskId, batchSize: batchSizeOf(task.inputData), blocking: isBlocking(task.inputData) }));
}

/** True for a PULL_WORKFLOW_MESSAGES task waiting for its batch. */
export function waitsForMessages(task: TaskExecution): boolean {
  return task.taskType === "PULL_WORKFLOW_MESSAGES" && task.status === "IN_PROGRESS";
}

/**
 * PULL_WORKFLOW_MESSAGES (Conductor's Workflow Message Queue): waits, IN_PROGRESS, until its workflow's queue holds
 * messages (pushed with `POST /api/workflow/{workflowId}/messages`), then completes with up to `batchSize` of them
 * (`messages`, `count`), taken off the queue in the change that completes it (the event `messagesPulled`, which the
 * actor gives it from its queue). With `blocking: false` it completes at once, with what there is. Like any waiting
 * task, it may also be completed from outside.
 */
export const pullWorkflowMessagesTask: TaskTypeModule = {
  type: "PULL_WORKFLOW_MESSAGES",
  start(task, _definition, _execution, env) {
    return { task: { ...task, status: "IN_PROGRESS", startTime: env.now, updateTime: env.now, awaitingExternal: true }, dispatch: false };
  },
  attemptDeadline(_task, env) {
    return env.now;
  },
};
