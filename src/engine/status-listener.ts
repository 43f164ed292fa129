/**
 * Conductor's workflow status listener (`workflowStatusListenerEnabled`): an execution that ends publishes its
 * WorkflowSummary to Conductor's internal events, as the EVENT task publishes, for event handlers to act on.
 */
import { TERMINAL_WORKFLOW_STATUSES, type EventMessage, type JsonObject, type WorkflowExecution } from "./model";
import { summaryRowOf, toWorkflowSummary } from "./view";

/** Conductor's queue of executions that completed, when the definition names no sink. */
export const SUCCESS_STATUS_QUEUE = "_callbackSuccessQueue";
/** Conductor's queue of executions that failed, timed out or were terminated, when the definition names no sink. */
export const FAILURE_STATUS_QUEUE = "_callbackFailureQueue";
/**
 * Conductor's queue of every execution that ended, whatever its status, when the definition names no sink: its queue
 * publisher's `finalizeQueue` (ConductorQueueStatusPublisher.onWorkflowFinalized), told besides the success or failure
 * queue, with the same summary. Not after it: each publication is its own background job, and Conductor has no one
 * order either (conductor-oss's terminateWorkflow finalizes before it tells the failure queue, a completion after).
 */
export const FINALIZE_STATUS_QUEUE = "_callbackFinalizeQueue";

const CONDUCTOR_SINK = "conductor";

/** A status publication an execution owes: an event message, its id one per ending. */
export type StatusPublication = EventMessage;

/** True when `sink` is one the listener publishes to: `conductor`, or `conductor:<queue>`. */
export function isStatusListenerSink(sink: unknown): boolean {
  return sink === CONDUCTOR_SINK || (typeof sink === "string" && /^conductor:[^:\s]+$/.test(sink));
}

/**
 * The event an ending of `execution` is published as: a sink `conductor:<queue>` names its workflow's queue, as an
 * EVENT task's sink does (`conductor:<workflow name>:<queue>`); without one (or with `conductor`), Conductor's
 * success or failure queue, shared by every workflow (`conductor:_callbackSuccessQueue`).
 */
function statusEvent(execution: WorkflowExecution): string {
  const sink = execution.definition.workflowStatusListenerSink;
  if (typeof sink === "string" && sink !== CONDUCTOR_SINK) return `${CONDUCTOR_SINK}:${execution.workflowName}:${sink.slice(CONDUCTOR_SINK.length + 1)}`;
  return `${CONDUCTOR_SINK}:${execution.status === "COMPLETED" ? SUCCESS_STATUS_QUEUE : FAILURE_STATUS_QUEUE}`;
}

/**
 * The publication owed as `next` is decided from `previous` to the success or failure queue (or the sink): one when it
 * has just ended (it was not ended, or ended otherwise: a retried or rerun execution that ends again publishes again)
 * and its definition enables the listener. The message id names the ending, so a publication repeated after an
 * eviction is the same message. {@link statusPublications} gives the finalize queue's too.
 */
export function statusPublication(previous: WorkflowExecution | null, next: WorkflowExecution): StatusPublication | undefined {
  return statusPublications(previous, next)[0];
}

/**
 * Every publication owed as `next` is decided from `previous` (see {@link statusPublication}): the success or failure
 * queue's (or the sink's) and, without a sink, the finalize queue's, as Conductor's queue publisher tells both
 * (onWorkflowCompleted or onWorkflowTerminated, and onWorkflowFinalized); they are made independently, in no set
 * order. A sink names the one queue told.
 */
export function statusPublications(previous: WorkflowExecution | null, next: WorkflowExecution): StatusPublication[] {
  const ending = endingPublication(previous, next);
  if (ending === undefined) return [];
  const sink = next.definition.workflowStatusListenerSink;
  if (typeof sink === "string" && sink !== CONDUCTOR_SINK) return [ending];
  // Its own message id: the publication is stored and its handlers' progress kept under it.
  return [ending, { ...ending, event: `${CONDUCTOR_SINK}:${FINALIZE_STATUS_QUEUE}`, messageId: `${ending.messageId}:FINALIZED` }];
}

/** See {@link statusPublication}. */
function endingPublication(previous: WorkflowExecution | null, next: WorkflowExecution): StatusPublication | undefined {
  if (next.definition.workflowStatusListenerEnabled !== true || !TERMINAL_WORKFLOW_STATUSES.has(next.status)) return undefined;
  if (previous !== null && previous.status === next.status && previous.endTime === next.endTime) return undefined;
  const payload = toWorkflowSummary(summaryRowOf(next));
  return { event: statusEvent(next), messageId: `${next.workflowId}:${next.status}:${next.endTime}`, payload };
}
